package adaptive

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors/stagekit"
)

// Control messages of the stage's own.
type (
	pumpMsg   struct{}            // the gate may have opened: hand on what waits
	cancelMsg struct{}            // the context of a request waiting in the stage ended
	grantMsg  struct{ err error } // the inner service granted a unit, or failed
)

// behavior is the stage's part of an adaptive limit.
//
// The stage's mailbox slots are the permits (see slots): a request keeps
// its slot from its reservation until its outcome comes back, and the
// stage, not the runtime, frees it (it may keep it instead, see slots).
// The actor hands requests on, in order, while the gate allows one more
// call in flight and the inner service is ready; the others wait in the
// stage, holding their slots: only those admitted before a decrease, or
// while the inner service is not ready. Outcomes come back through the
// stage's frame (hook.go), on the goroutines that produce them, and move
// the limit there.
//
// NOTE: the stage is spawned without Config.HoldUntilOutcome, and hands
// requests on with Stage.SendInner, never Stage.Forward (which frees the
// slot as it hands the request on) nor Stage.Answer (which frees it too):
// the slot is the behavior's to free or keep, when the outcome passes its
// frame or when it answers a request itself (answer).
type behavior[Req, Res any] struct {
	st       *stagekit.Stage[Req, Res] // set by attach, then read-only
	waiter   *stagekit.Waiter          // set by attach; in the inner service's line at most once
	onCancel func()                    // set by attach: posts cancelMsg
	clock    stagekit.Clock
	classify func(error) bool   // nil: every error is a drop
	onChange func(old, new int) // nil: nobody is told
	rep      *stagekit.Reporter // the stack's observer; nil: none; set by attach, then read-only
	log      *slog.Logger       // the system's; set by New, then read-only
	calls    sync.Pool          // *call, one per call in flight

	mu      sync.Mutex
	lim     limiter  // guarded by mu
	sl      slots    // guarded by mu
	pending []change // changes not yet told to onChange, in order; guarded by mu

	gate    atomic.Int64 // lim.gate, stored under mu: Limit without the lock
	waiting atomic.Int32 // len(queue), stored by the actor: whether an outcome must post pumpMsg

	tell     sync.Mutex  // held by the goroutine telling onChange
	toldMore atomic.Bool // a change was queued while another goroutine told

	// Owned by the actor.
	queue   fifo[Req, Res]
	started bool // the first request came: the starting limit was reported
	asked   bool // the waiter is in the inner service's line
	unit    bool // a unit of the inner service is reserved and not spent (kept for the first in line while the gate is closed)
}

// change is one move of the limit, for onChange.
type change struct{ old, new int }

// call is what the stage's frame remembers of a call in flight (its Aux).
type call struct {
	ctx   context.Context // the request's context as it reached the stage
	start time.Time       // when it was handed on, on the stage's clock
	epoch uint64
}

func newBehavior[Req, Res any](c config) *behavior[Req, Res] {
	b := &behavior[Req, Res]{lim: newLimiter(c), clock: stagekit.NewClock(), classify: c.classify, onChange: c.onChange}
	b.calls.New = func() any { return new(call) }
	b.gate.Store(int64(b.lim.gate))
	return b
}

// attach gives the behavior its stage, right after Spawn and before anyone
// can reserve: the slots above the gate (the min, for the first probe) are
// held back.
func (b *behavior[Req, Res]) attach(st *stagekit.Stage[Req, Res], maxLimit int) {
	b.st, b.rep = st, st.Reporter()
	b.waiter = stagekit.NewWaiter(func(err error) { st.PostControl(grantMsg{err: err}) })
	b.onCancel = func() { st.PostControl(cancelMsg{}) }
	want := maxLimit - b.lim.gate
	got := holdBack(st, want)
	b.mu.Lock()
	b.sl = slots{held: got, owed: want - got}
	b.mu.Unlock()
}

// Request queues e behind those waiting and hands on what the gate allows
// (actor).
func (b *behavior[Req, Res]) Request(s *stagekit.Stage[Req, Res], e *stagekit.Envelope[Req, Res]) {
	if !b.started {
		b.started = true
		b.reportStart()
	}
	s.Keep(e) // Fail answers it until it is handed on
	b.queue.push(e)
	b.waiting.Store(int32(b.queue.len()))
	b.pump(s)
}

// pump hands on the requests that wait, first in line first, while the
// gate allows one more call in flight and the inner service grants units
// (actor). Those left wait, their contexts watched.
func (b *behavior[Req, Res]) pump(s *stagekit.Stage[Req, Res]) {
	for b.queue.len() > 0 {
		e := b.queue.front()
		if err := e.Ctx.Err(); err != nil { // its caller gave up while it waited
			b.queue.pop()
			b.answer(e, err)
			continue
		}
		if !b.unit {
			ok, refused := b.reserveInner(s, e)
			if refused != nil { // the inner service refused e alone
				b.queue.pop()
				b.answer(e, refused)
				continue
			}
			if !ok {
				break
			}
		}
		b.mu.Lock()
		ep, ok := b.lim.admit()
		b.mu.Unlock()
		if !ok {
			break // an outcome or an increase posts pumpMsg
		}
		b.unit = false
		b.queue.pop()
		b.send(s, e, ep, false)
	}
	if b.unit && b.queue.len() == 0 {
		b.unit = false
		s.Inner().Unreserve()
	}
	b.waiting.Store(int32(b.queue.len()))
	b.queue.watch(b.onCancel)
	b.takeBack()
}

// reserveInner takes a unit of the inner service for e, or puts the stage
// in its line (the grant arrives as grantMsg), and reports whether it has
// one. A readiness error closes the stage (Break), whose Fail answers the
// requests waiting.
func (b *behavior[Req, Res]) reserveInner(s *stagekit.Stage[Req, Res], e *stagekit.Envelope[Req, Res]) (ok bool, refused error) {
	if b.asked {
		return false, nil
	}
	ok, err := s.Inner().TryReserve()
	if err == nil && !ok {
		ok, err = stagekit.ReserveFor(e.Ctx, s.Inner(), b.waiter)
		b.asked = err == nil && !ok
	}
	if err != nil && errors.Is(err, troupe.ErrFull) {
		return false, err
	}
	if err != nil {
		s.Break(err)
		return false, nil
	}
	b.unit = ok
	return ok, nil
}

// RequestOnCaller hands e on from its sender's goroutine, with the inner
// unit the sender reserved, when the gate admits one more call in flight
// (stagekit.CallerRequester): what pump does for the first in line. When
// the gate is closed it declines, and the actor queues e.
func (b *behavior[Req, Res]) RequestOnCaller(s *stagekit.Stage[Req, Res], e *stagekit.Envelope[Req, Res]) bool {
	b.mu.Lock()
	ep, ok := b.lim.admit()
	b.mu.Unlock()
	if !ok {
		return false
	}
	b.send(s, e, ep, true)
	return true
}

// Ordinary reports whether requests may cross the stage on their callers'
// goroutines (stagekit.CallerRequester): once the first request has been
// seen (its starting limit reported), while none waits in the stage and
// the stage neither waits for nor keeps an inner unit (actor).
func (b *behavior[Req, Res]) Ordinary() bool {
	return b.started && b.queue.len() == 0 && !b.asked && !b.unit
}

// send hands e on with a unit of the inner service, behind the stage's
// frame, which measures it: from the actor, or from e's sender on the
// caller's path (onCaller).
func (b *behavior[Req, Res]) send(s *stagekit.Stage[Req, Res], e *stagekit.Envelope[Req, Res], ep uint64, onCaller bool) {
	f, err := e.Push(b)
	if err != nil {
		b.mu.Lock()
		b.lim.unadmit()
		b.mu.Unlock()
		s.Inner().Unreserve()
		b.answer(e, err)
		return
	}
	c := b.calls.Get().(*call)
	c.ctx, c.start, c.epoch = e.Ctx, b.clock.Now(), ep
	f.Aux = c
	if onCaller {
		s.SendOnCaller(e)
		return
	}
	s.SendInner(e)
}

// answer ends the path of a request that waited in the stage with err,
// giving its slot back (or keeping it, see slots).
func (b *behavior[Req, Res]) answer(e *stagekit.Envelope[Req, Res], err error) {
	b.release()
	var zero Res
	e.Answer(zero, b.st.Rejected(err))
}

// Control handles the stage's own messages (actor).
func (b *behavior[Req, Res]) Control(s *stagekit.Stage[Req, Res], msg any) {
	switch m := msg.(type) {
	case pumpMsg:
	case cancelMsg:
		b.queue.dropDone(b.answer)
	case grantMsg:
		b.asked = false
		if m.err != nil && errors.Is(m.err, troupe.ErrFull) && b.queue.len() > 0 {
			// The inner service refused the request it waited for (its
			// maximum wait): that one is answered, the next may go.
			e := b.queue.front()
			b.queue.pop()
			b.answer(e, m.err)
			break
		}
		if m.err != nil {
			s.Break(m.err)
			return
		}
		b.unit = true
	default:
		return
	}
	b.pump(s)
}

// Fail answers every request waiting in the stage with err: the stage
// restarts or stops (actor). Calls in flight go on; their slots come back
// with their outcomes.
func (b *behavior[Req, Res]) Fail(s *stagekit.Stage[Req, Res], err error) {
	b.queue.drain(func(e *stagekit.Envelope[Req, Res]) { b.answer(e, err) })
	b.waiting.Store(0)
	if b.asked && s.Inner().CancelWait(b.waiter) {
		b.asked = false
	} // otherwise the grant is on its way: Control or Dropped gives it back
	if b.unit {
		b.unit = false
		s.Inner().Unreserve()
	}
}

// Idle reports whether no request waits in the stage (actor).
func (b *behavior[Req, Res]) Idle() bool { return b.queue.len() == 0 }

// Dropped gives back a unit the inner service granted after the stage
// stopped (the inner service never changes, so reading it here is safe).
func (b *behavior[Req, Res]) Dropped(msg any, _ error) {
	if g, ok := msg.(grantMsg); ok && g.err == nil {
		b.st.Inner().Unreserve()
	}
}

// reportStart tells the observer the starting limit, as a change, before
// the stage's first request: a dashboard shows the limit from the start,
// not from its first move. No change can be told before it (changes come
// from outcomes); a panic in the observer is logged.
func (b *behavior[Req, Res]) reportStart() {
	if b.rep != nil {
		_ = b.rep.Report(troupe.Event{Type: troupe.EventLimitChanged, Limit: int(b.gate.Load())})
	}
}
