package breaker

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors/stagekit"
	"github.com/troupe-go/troupe/internal/ilist"
)

// delayEnded is the alarm's message: the open delay may have ended.
type delayEnded struct{}

// behavior is the breaker's part of the stage. Its fields are set by New,
// then read-only, except those guarded by mu.
//
// Where the state lives: in machine, under mu, not on the stage's actor.
// A call is admitted in OnSend, on the goroutine that sends it, and its
// outcome is counted in Complete, wherever the outcome was produced; the
// actor only forwards requests and handles the alarm that ends the open
// delay. A control message per outcome would cost every call a hop (an
// allocation or a pool, and the actor's wake-up) and would leave a window
// in which a caller that has just tripped the breaker gets through again
// before the actor has heard. Under mu, admitting a call and counting its
// outcome are a few integer updates, with no user code and nothing that
// waits; a refused call never enters the mailbox at all.
type behavior[Req, Res any] struct {
	stagekit.Passthrough[Req, Res]
	o        *options
	classify func(Res, error) bool // nil: every error is a failure
	exclude  func(Res, error) bool // nil: every outcome counts
	clocked  bool                  // slow calls or a time window: outcomes need the time
	clock    stagekit.Clock
	alarm    *stagekit.Alarm
	log      *slog.Logger
	st       *stagekit.Stage[Req, Res]
	rep      *stagekit.Reporter // the observer's (nil: none); set by New, before any request

	mu sync.Mutex
	m  *machine // guarded by mu
	// The frames of the calls admitted in the machine's current epoch
	// whose outcome is not in; a frame no longer listed belongs to an
	// earlier state and its outcome does not count. Guarded by mu.
	calls ilist.List[stagekit.Frame[Req, Res]]
	epoch uint64 // the machine's epoch calls belongs to; guarded by mu
	// Changes waiting for OnStateChange, in order, and whether the
	// notifier goroutine runs; guarded by mu.
	notices   []notice[Req, Res]
	notifying bool
}

// OnSend admits or refuses e, on the sender's goroutine (stagekit.SendHook).
// An admitted call gets the stage's frame, listed in calls, with the
// caller's context in Aux (its cancellation is not the service's fault;
// e.Ctx may be replaced below, by a Timeout inside) and, when the time
// counts, the time it was made in Deadline. A refused call is answered
// with the *OpenError at once. NOTE: the runtime then frees the slot the
// sender reserved and answers e (stagekit's Stage.sendFrom): a refused call
// holds nothing and never reaches the actor.
func (b *behavior[Req, Res]) OnSend(_ *stagekit.Stage[Req, Res], e *stagekit.Envelope[Req, Res]) error {
	var now time.Time
	if b.clocked {
		now = b.clock.Now()
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	oerr := b.m.admit(now)
	b.settle(nil) // first: the open delay may have ended, a change that empties calls
	if oerr != nil {
		return oerr
	}
	f, err := e.Push(b)
	if err != nil {
		b.m.forget()
		return err
	}
	f.Aux, f.Deadline = e.Ctx, now
	b.calls.Push(f, &f.Links)
	return nil
}

// Complete is the hook of the stage's frames: it counts the outcome of a
// call admitted in the current state. When that outcome changes the state
// and OnStateChange is set, the outcome is kept until the notifier has run
// it (see notify).
func (b *behavior[Req, Res]) Complete(e *stagekit.Envelope[Req, Res], f *stagekit.Frame[Req, Res], out stagekit.Outcome[Res]) stagekit.Outcome[Res] {
	res, err := out.Res, out.Err
	counted, failed, perr := b.judge(f.Aux.(context.Context), res, err)
	if perr != nil {
		err = withPanic(perr, err)
	}
	var now time.Time
	if b.clocked {
		now = b.clock.Now()
	}
	b.mu.Lock()
	if !f.Listed() {
		b.mu.Unlock()
		return stagekit.Outcome[Res]{Res: res, Err: err} // admitted in an earlier state
	}
	b.calls.Remove(&f.Links)
	if !counted {
		b.m.forget()
		b.mu.Unlock()
		return stagekit.Outcome[Res]{Res: res, Err: err}
	}
	slow := b.o.slowAfter > 0 && now.Sub(f.Deadline) > b.o.slowAfter
	if terr := b.m.record(failed, slow, now); terr != nil {
		err = withPanic(terr, err)
	}
	kept := false
	if b.epoch != b.m.epoch {
		kept = b.settle(&notice[Req, Res]{e: e, pos: f.Pos(), res: res, err: err})
	}
	b.mu.Unlock()
	return stagekit.Outcome[Res]{Res: res, Err: err, Kept: kept}
}

// judge classifies an outcome: whether it counts, whether it is a failure,
// and the classifier's panic.
func (b *behavior[Req, Res]) judge(caller context.Context, res Res, err error) (counted, failed bool, perr error) {
	if err != nil {
		if cerr := caller.Err(); cerr != nil && errors.Is(err, cerr) {
			return false, false, nil // the caller gave up
		}
	}
	if b.exclude != nil {
		excluded, perr := stagekit.Guard1("breaker: Exclude", func() (bool, error) { return b.exclude(res, err), nil })
		if perr != nil || excluded {
			return false, false, perr
		}
	}
	if b.classify == nil {
		return true, err != nil, nil
	}
	failed, perr = stagekit.Guard1("breaker: classifier", func() (bool, error) { return b.classify(res, err), nil })
	return perr == nil, failed, perr
}

// settle follows up the machine's changes, with mu held: the calls of an
// earlier state leave the list, an opening arms the alarm, and each change
// goes to OnStateChange and the observer. call, when not nil, is the
// outcome being counted: if it made a change, the notifier keeps it until
// OnStateChange and the observer have run, and settle reports true (the
// outcome is kept, and referenced).
func (b *behavior[Req, Res]) settle(call *notice[Req, Res]) (kept bool) {
	if b.epoch == b.m.epoch {
		return false
	}
	b.epoch = b.m.epoch
	for f := b.calls.Front(); f != nil; f = b.calls.Front() {
		b.calls.Remove(&f.Links)
	}
	if b.m.state == Open {
		b.alarm.Set(b.m.retryAt)
	}
	changes := b.m.changes
	b.m.changes = changes[:0]
	if b.o.onChange == nil && b.o.onTrans == nil && b.rep == nil {
		return false
	}
	for i, c := range changes {
		n := notice[Req, Res]{Transition: c}
		if call != nil && i == len(changes)-1 {
			n.e, n.pos, n.res, n.err = call.e, call.pos, call.res, call.err
			n.e.Ref() // until the notifier passes the outcome on
			kept = true
		}
		b.notices = append(b.notices, n)
	}
	if !b.notifying {
		b.notifying = true
		go b.notify()
	}
	return kept
}

// Control ends the open delay when the alarm fires (on the actor): the
// breaker goes HalfOpen at the delay's end, unless a call noticed first.
func (b *behavior[Req, Res]) Control(_ *stagekit.Stage[Req, Res], msg any) {
	if _, ok := msg.(delayEnded); !ok {
		return
	}
	b.alarm.Fired()
	now := b.clock.Now()
	b.mu.Lock()
	defer b.mu.Unlock()
	b.m.advance(now)
	if b.m.state == Open {
		b.alarm.Set(b.m.retryAt) // a stale firing: the breaker opened again since
	}
	b.settle(nil)
}

// force moves the breaker to state to now (Breaker.Open, HalfOpen and
// Reset), from any goroutine: the machine is guarded by mu, as for the
// senders' admissions.
func (b *behavior[Req, Res]) force(to State) {
	now := b.clock.Now()
	b.mu.Lock()
	defer b.mu.Unlock()
	b.m.force(to, now)
	b.settle(nil)
}

// RejectReason says that ErrOpen is the breaker's refusal, for the
// observer (stagekit.Rejecter).
func (b *behavior[Req, Res]) RejectReason(err error) troupe.Reason {
	if errors.Is(err, ErrOpen) {
		return troupe.ReasonOpen
	}
	return troupe.ReasonOther
}

// Fail stops the alarm when the stage stops; a restart changes nothing:
// the breaker keeps no request, and its state outlives the actor's.
func (b *behavior[Req, Res]) Fail(_ *stagekit.Stage[Req, Res], err error) {
	if !isRestart(err) {
		b.alarm.Stop()
	}
}

// snapshot returns the breaker's state now.
// Detail is the stage's Stats' Detail: a Snapshot (stagekit.Detailer).
func (b *behavior[Req, Res]) Detail() any { return b.snapshot() }

func (b *behavior[Req, Res]) snapshot() Snapshot {
	now := b.clock.Now()
	b.mu.Lock()
	defer b.mu.Unlock()
	s := b.m.snapshot(now)
	b.settle(nil)
	s.InFlight = b.calls.Len()
	return s
}
