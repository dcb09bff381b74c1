package timeout

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/internal/dheap"
)

// Timeout is a running timeout stage: a troupe.Service and a troupe.Closer.
type Timeout[Req, Res any] struct {
	*actors.Stage[Req, Res]
	b *behavior[Req, Res]
}

// Option configures a Timeout.
type Option func(*actors.Config)

// Capacity sets the stage's mailbox capacity (default 64).
func Capacity(n int) Option { return func(c *actors.Config) { c.Capacity = n } }

// New spawns a timeout stage of duration d over inner, in host h (nil means
// the default system).
func New[Req, Res any](h troupe.Host, inner troupe.Service[Req, Res], d time.Duration, opts ...Option) (*Timeout[Req, Res], error) {
	if d <= 0 {
		return nil, ErrBadDuration
	}
	cfg := actors.Config{Name: "timeout"}
	for _, o := range opts {
		o(&cfg)
	}
	b := &behavior[Req, Res]{d: d, err: &Error{After: d}, clock: actors.NewClock()}
	b.heap.Less = func(x, y *actors.Frame[Req, Res]) bool { return x.Deadline.Before(y.Deadline) }
	b.heap.SetIndex = func(f *actors.Frame[Req, Res], i int) { f.Index = i }
	st, err := actors.Spawn[Req, Res](h, cfg, inner, b)
	if err != nil {
		return nil, errors.Join(errors.New("timeout: spawn"), err)
	}
	b.alarm = st.NewAlarm(expireMsg{})
	b.st = st
	return &Timeout[Req, Res]{Stage: st, b: b}, nil
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
	return t.b.heap.Len()
}

// expireMsg is the alarm's message: some deadline has passed.
type expireMsg struct{}

// behavior times the calls sent to the stage. Its deadline set is shared by
// the senders (who add), the completers (who remove) and the actor (which
// expires): all under mu.
type behavior[Req, Res any] struct {
	actors.Passthrough[Req, Res]
	d     time.Duration
	err   *Error // the outcome of every expired call; never changed
	clock actors.Clock
	alarm *actors.Alarm
	st    *actors.Stage[Req, Res]

	mu   sync.Mutex
	heap dheap.Heap[*actors.Frame[Req, Res]] // frames of calls in flight, by deadline; guarded by mu
}

// OnSend starts the call's clock: the call is made now (T1). It runs on the
// sender's goroutine.
func (b *behavior[Req, Res]) OnSend(_ *actors.Stage[Req, Res], e *actors.Envelope[Req, Res]) error {
	f, err := e.Push(b)
	if err != nil {
		return err
	}
	ctx := &callCtx{Context: e.Ctx, deadline: b.clock.Now().Add(b.d)}
	f.Deadline, f.Aux = ctx.deadline, ctx
	e.Ctx = ctx
	e.Ref() // the heap's reference
	b.mu.Lock()
	b.heap.Push(f)
	if f.Index == 0 {
		// Expire strictly after the deadline, so that a response arriving
		// at the deadline itself wins (T2).
		b.alarm.Set(f.Deadline.Add(time.Nanosecond))
	}
	b.mu.Unlock()
	return nil
}

// Complete is the hook of the stage's frames: the call has its outcome.
func (b *behavior[Req, Res]) Complete(e *actors.Envelope[Req, Res], f *actors.Frame[Req, Res], res Res, err error) (Res, error, bool) {
	b.mu.Lock()
	mine := f.Index >= 0
	if mine {
		b.heap.Remove(f.Index)
	}
	idle := b.heap.Len() == 0
	b.mu.Unlock()
	if mine && idle {
		b.st.Recheck() // a draining stage may stop now
	}
	ctx := f.Aux.(*callCtx)
	if mine {
		ctx.release()
		e.Unref()
	}
	if err != nil && errors.Is(err, context.DeadlineExceeded) && !b.clock.Now().Before(f.Deadline) && !errors.Is(err, ErrTimeout) {
		err = b.err // the work gave up at our deadline: say so
	}
	return res, err, false
}

// Control handles the alarm: every call whose deadline has strictly passed
// returns the timeout error, and its work's context is cancelled (T3).
func (b *behavior[Req, Res]) Control(_ *actors.Stage[Req, Res], msg any) {
	if _, ok := msg.(expireMsg); !ok {
		return
	}
	b.alarm.Fired()
	now := b.clock.Now()
	for {
		b.mu.Lock()
		if b.heap.Len() == 0 {
			b.mu.Unlock()
			return
		}
		f := b.heap.Min()
		if !f.Deadline.Before(now) {
			b.alarm.Set(f.Deadline.Add(time.Nanosecond))
			b.mu.Unlock()
			return
		}
		b.heap.Remove(0)
		b.mu.Unlock()
		b.expire(f, b.err, context.DeadlineExceeded)
	}
}

// expire forces the outcome err on the call of frame f, which the caller
// took out of the heap (with the heap's reference), then tells the work to
// stop with cause. In that order: the work, told first, could answer with
// the context's error and claim the frame before err.
func (b *behavior[Req, Res]) expire(f *actors.Frame[Req, Res], err, cause error) {
	ctx := f.Aux.(*callCtx)
	e := f.Envelope()
	var zero Res
	e.CompleteAt(f.Pos(), zero, err)
	ctx.cancel(cause)
	e.Unref()
}

// Idle reports whether no call is being timed: a closing stage waits for
// its calls in flight.
func (b *behavior[Req, Res]) Idle() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.heap.Len() == 0
}

// Fail answers every call in flight with err when the stage stops; on a
// restart the calls keep their deadlines.
func (b *behavior[Req, Res]) Fail(_ *actors.Stage[Req, Res], err error) {
	if errors.Is(err, troupe.ErrRestarted) {
		return
	}
	b.alarm.Stop()
	for {
		b.mu.Lock()
		if b.heap.Len() == 0 {
			b.mu.Unlock()
			return
		}
		f := b.heap.Remove(0)
		b.mu.Unlock()
		b.expire(f, err, context.Canceled)
	}
}
