package timeout

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors/stagekit"
	"github.com/troupe-go/troupe/internal/ilist"
	"github.com/troupe-go/troupe/internal/opt"
	"github.com/troupe-go/troupe/internal/sat"
)

// Timeout is a running timeout stage: a troupe.Service and a troupe.Closer.
// It is safe for concurrent use.
type Timeout[Req, Res any] struct {
	stagekit.Handle[Req, Res]
	b *behavior[Req, Res]
}

// Option configures a Timeout.
//
// Options are plain values, safe for concurrent use.
type Option func(*options)

type options struct {
	cfg     stagekit.Config
	abandon bool
}

// Capacity sets the stage's mailbox capacity. The default, 0, sets no limit
// of its own: the stage admits what the stages outside it admit. With
// Abandon it also bounds the calls running below the stage, abandoned ones
// included.
func Capacity(n int) Option { return func(o *options) { o.cfg.Capacity = n } }

// New spawns a timeout stage of duration d over inner, in host h (nil is an
// error). A d of zero or less, or a bad capacity, is an error matching
// troupe.ErrBadConfig.
func New[Req, Res any](h troupe.Host, inner troupe.Service[Req, Res], d time.Duration, opts ...Option) (*Timeout[Req, Res], error) {
	if d <= 0 {
		return nil, opt.Bad("timeout", "Timeout", d, "must be greater than zero")
	}
	o := options{cfg: stagekit.Config{Name: "timeout"}}
	if err := opt.Apply("timeout", &o, opts); err != nil {
		return nil, err
	}
	// An abandoned call keeps its slot until its work ends (see Abandon).
	o.cfg.HoldUntilOutcome = o.abandon
	o.cfg.CallerPath = !o.abandon // it forwards every request as it is: crossed on the caller's goroutine in its ordinary state
	clock := stagekit.NewClock()
	b := &behavior[Req, Res]{d: d, err: &Error{After: d}, clock: &clock}
	if o.abandon {
		b.abandoned = new(atomic.Int64)
	}
	st, err := stagekit.Spawn[Req, Res](h, o.cfg, inner, b)
	if err != nil {
		return nil, fmt.Errorf("timeout: %w", err)
	}
	b.alarm = st.NewAlarm(expireMsg{})
	b.st = st
	t := &Timeout[Req, Res]{b: b}
	t.Handle = stagekit.NewHandle(st, nil)
	return t, nil
}

// Layer returns a layer that puts a timeout of duration d over the service
// inside it.
func Layer[Req, Res any](d time.Duration, opts ...Option) troupe.Layer[Req, Res] {
	return troupe.LayerFunc[Req, Res](func(h troupe.Host, inner troupe.Service[Req, Res]) (troupe.Service[Req, Res], error) {
		return New(h, inner, d, opts...)
	})
}

// InFlight reports how many calls the stage is timing.
func (t *Timeout[Req, Res]) InFlight() int {
	t.b.mu.Lock()
	defer t.b.mu.Unlock()
	return t.b.calls.Len()
}

// expireMsg is the alarm's message: some deadline has passed.
type expireMsg struct{}

// behavior times the calls sent to the stage. Its deadline set is shared by
// the senders (who add), the completers (who remove) and the actor (which
// expires): all under mu.
type behavior[Req, Res any] struct {
	stagekit.Passthrough[Req, Res]
	d   time.Duration
	err *Error // the outcome of every expired call; never changed
	// clock is out of line: every call's context points at it, and a
	// context must not reach its stage (see stagekit.CtxCore). Never
	// changed.
	clock *stagekit.Clock
	alarm *stagekit.Alarm
	st    *stagekit.Stage[Req, Res]

	// In Abandon mode (nil: not), the calls answered whose work still
	// runs (see abandoning); the pointer is never changed. Out of line, so
	// that the behaviour of a stage without it stays in its size class.
	abandoned *atomic.Int64

	// The calls in flight, by deadline; guarded by mu. Every call sent to
	// the stage gets the same timeout, so a call sent later never has an
	// earlier deadline (OnSend makes sure of it for senders that race): a
	// FIFO is a deadline-ordered set, whose add, remove and earliest are
	// O(1) and touch only the neighbours of the call they change.
	mu    sync.Mutex
	calls ilist.List[stagekit.Frame[Req, Res]]
}

// OnSend starts the call's clock: the call is made now. It runs on the
// sender's goroutine.
func (b *behavior[Req, Res]) OnSend(_ *stagekit.Stage[Req, Res], e *stagekit.Envelope[Req, Res]) error {
	f, err := e.Push(b)
	if err != nil {
		return err
	}
	ctx := new(callCtx)
	ctx.Init(e.Ctx)
	f.Aux = ctx
	if b.abandoned != nil {
		if err := b.watchWork(e, ctx); err != nil {
			return err
		}
	}
	e.SetCtx(ctx, true) // the stage cancels it when closed with the call running
	e.ForcesOutcome()   // the deadline answers it while its work may still run
	e.Ref()             // the list's reference
	// Saturating: a timeout up to math.MaxInt64 is a deadline that far
	// off, never one in the past.
	off := sat.Add(b.clock.Elapsed(), b.d)
	deadline := b.clock.At(off)
	b.mu.Lock()
	if t := b.calls.Back(); t != nil && deadline.Before(t.Deadline) {
		deadline = t.Deadline // a racing sender got in first: keep the order
		off = b.clock.Offset(deadline)
	}
	ctx.clock, ctx.off, f.Deadline = b.clock, off, deadline
	if b.calls.Push(f, &f.Links); b.calls.Len() == 1 {
		// Expire strictly after the deadline, so that a response arriving
		// at the deadline itself wins.
		b.alarm.Set(deadline.Add(time.Nanosecond))
	}
	b.mu.Unlock()
	return nil
}

// Complete is the hook of the stage's frames: the call has its outcome.
func (b *behavior[Req, Res]) Complete(e *stagekit.Envelope[Req, Res], f *stagekit.Frame[Req, Res], out stagekit.Outcome[Res]) stagekit.Outcome[Res] {
	res, err := out.Res, out.Err
	b.mu.Lock()
	mine := f.Listed()
	if mine {
		b.calls.Remove(&f.Links)
	}
	idle := b.calls.Len() == 0
	b.mu.Unlock()
	if mine && idle {
		b.st.Recheck() // a draining stage may stop now
	}
	cc := f.Aux.(*callCtx)
	if mine {
		cc.Settle() // the work's outcome may still be in use: only the parent ends the context now
		e.Unref()
	}
	if err != nil && errors.Is(err, context.DeadlineExceeded) && !b.clock.Now().Before(f.Deadline) && !errors.Is(err, ErrTimeout) {
		err = b.timedOut(cc.Context) // the work gave up at our deadline: say so
	}
	return stagekit.Outcome[Res]{Res: res, Err: err}
}

// Control handles the alarm: every call whose deadline has strictly passed
// returns the timeout error, and its work's context is cancelled.
func (b *behavior[Req, Res]) Control(_ *stagekit.Stage[Req, Res], msg any) {
	if _, ok := msg.(expireMsg); !ok {
		return
	}
	b.alarm.Fired()
	now := b.clock.Now()
	for {
		b.mu.Lock()
		f := b.calls.Front()
		if f == nil {
			b.mu.Unlock()
			return
		}
		if !f.Deadline.Before(now) {
			b.alarm.Set(f.Deadline.Add(time.Nanosecond))
			b.mu.Unlock()
			return
		}
		b.calls.Remove(&f.Links)
		b.mu.Unlock()
		b.expire(f, b.timedOut(f.Aux.(*callCtx).Context), &causeDeadline)
	}
}

// timedOut reports a call with the context ctx (the one the stage was
// given) that timed out to the observer (EventTimedOut) and returns its
// outcome: the timeout error, joined with the observer's panic if it
// panicked.
func (b *behavior[Req, Res]) timedOut(ctx context.Context) error {
	var err error = b.err
	if r := b.st.Reporter(); r != nil {
		if perr := r.Report(troupe.Event{Type: troupe.EventTimedOut, Err: err, Context: ctx}); perr != nil {
			err = stagekit.JoinPanic(perr, err)
		}
	}
	return err
}

// expire forces the outcome err on the call of frame f, which the caller
// took out of the list (with the list's reference), then tells the work to
// stop with cause. In that order: the work, told first, could answer with
// the context's error and claim the frame before err.
func (b *behavior[Req, Res]) expire(f *stagekit.Frame[Req, Res], err error, cause *error) {
	ctx := f.Aux.(*callCtx)
	e := f.Envelope()
	if b.abandoned != nil {
		b.abandoning(ctx)
	}
	var zero Res
	e.CompleteAt(f.Pos(), zero, err)
	ctx.CancelWith(cause)
	e.Unref()
}

// Idle reports whether no call is being timed and no abandoned work runs:
// a closing stage waits for both.
func (b *behavior[Req, Res]) Idle() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.calls.Len() == 0 && (b.abandoned == nil || b.abandoned.Load() == 0)
}

// Fail answers every call in flight with err when the stage stops; on a
// restart, and when the inner service broke (the calls in flight finish
// with their own outcomes, and the stage stops once they have), the calls
// keep their deadlines.
func (b *behavior[Req, Res]) Fail(s *stagekit.Stage[Req, Res], err error) {
	if s.Broken() || errors.Is(err, troupe.ErrRestarted) {
		return
	}
	b.alarm.Stop()
	for {
		b.mu.Lock()
		f := b.calls.Front()
		if f == nil {
			b.mu.Unlock()
			return
		}
		b.calls.Remove(&f.Links)
		b.mu.Unlock()
		b.expire(f, err, &causeCanceled)
	}
}
