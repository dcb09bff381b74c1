package stagekit

import (
	"context"
	"errors"

	"github.com/troupe-go/troupe"
)

// Forward hands e, which the stage holds, on to the inner service. When the
// inner service is ready the request goes at once and the stage's slot is
// freed (unless the stage holds slots until the outcome). When it is not,
// the stage parks e, keeping its slot, and takes no further requests until
// the inner service grants a unit, which arrives as a control message; the
// response path keeps flowing meanwhile. An inner
// readiness error breaks the stage: e and everything queued get a
// *troupe.ClosedError wrapping it.
//
// While a request is parked, a behavior may forward more (a rate limiter
// releasing several at once, filter checks finishing): they wait, in order,
// behind the parked one, each keeping its slot, and go when it has gone.
func (s *Stage[Req, Res]) Forward(e *Envelope[Req, Res]) {
	if s.closing >= broken {
		s.Answer(e, s.closeErr)
		return
	}
	if s.parked != nil {
		s.backlog = append(s.backlog, e)
		return
	}
	s.inHand = e // if the inner service panics, e is the request it held
	ok, err := s.inner.TryReserve()
	switch {
	case err != nil:
		s.innerBroken(e, err)
	case ok:
		s.handOn(e)
	default:
		s.park(e)
	}
	s.inHand = nil
}

// handOn sends e to the inner service with a unit reserved there.
func (s *Stage[Req, Res]) handOn(e *Envelope[Req, Res]) {
	if !s.hold {
		s.mb.Free()
	}
	s.SendInner(e)
}

// SendInner sends e to the inner service, with a unit reserved there (actor
// goroutine only). It is Inner().Send, except that an inner stage runs only
// once this one is handed back when this one has more work waiting (see
// mailbox.Mailbox.PostFrom): a loaded pipeline's stages then run on several
// goroutines at once.
func (s *Stage[Req, Res]) SendInner(e *Envelope[Req, Res]) {
	if in, ok := s.inner.(*stageInner[Req, Res]); ok {
		in.sendFrom(s.mb, e) // records the inner stage as e's holder, or answers e
		return
	}
	e.letGo()
	if s.obs != nil && e.obs == nil {
		e.obs = s.obs // an attempt of the stage's own (Retry's) reports EventStarted as the stage's
	}
	s.inner.Send(e)
}

func (s *Stage[Req, Res]) park(e *Envelope[Req, Res]) {
	s.parked = e
	s.mb.SetUserPaused(true)
	granted, err := ReserveFor(e.Ctx, s.inner, s.waiter)
	switch {
	case err != nil && errors.Is(err, troupe.ErrFull):
		s.unpark() // the inner service refused this request, not every one
		s.Answer(e, err)
		s.drainBacklog()
	case err != nil:
		s.unpark()
		s.innerBroken(e, err)
	case granted:
		s.unpark()
		s.handOn(e)
		s.drainBacklog()
	case e.Ctx.Done() != nil:
		e.unwatch = context.AfterFunc(e.Ctx, s.watchFn)
	}
}

// unpark forgets the parked request and takes requests again.
func (s *Stage[Req, Res]) unpark() *Envelope[Req, Res] {
	e := s.parked
	s.parked = nil
	s.mb.SetUserPaused(s.paused)
	if e != nil && e.unwatch != nil {
		e.unwatch()
		e.unwatch = nil
	}
	return e
}

// newWaiter returns a waiter for inner and the grant message it posts. Its
// callback runs on the goroutine that freed a unit of inner, so it only
// posts.
func (s *Stage[Req, Res]) newWaiter(in Inner[Req, Res]) (*Waiter, *grantMsg[Req, Res]) {
	ok := &grantMsg[Req, Res]{inner: in}
	return NewWaiter(func(err error) {
		if err == nil {
			s.mb.PostControl(ok)
			return
		}
		s.mb.PostControl(&grantMsg[Req, Res]{inner: in, err: err})
	}), ok
}

func (s *Stage[Req, Res]) onGrant(m *grantMsg[Req, Res]) {
	if m.inner != s.inner { // from an inner service replaced since (SetInner)
		if m.err == nil {
			m.inner.Unreserve()
		}
		return
	}
	e := s.unpark()
	switch {
	case e == nil:
		// The parked request left (restart, close) after its grant was
		// decided: give the unit back.
		if m.err == nil {
			m.inner.Unreserve()
		}
	case m.err != nil && errors.Is(m.err, troupe.ErrFull): // refused after its maximum wait
		s.Answer(e, m.err)
		s.drainBacklog()
	case m.err != nil:
		s.innerBroken(e, m.err)
	case e.Ctx.Err() != nil:
		s.inner.Unreserve()
		s.Answer(e, e.Ctx.Err())
		s.drainBacklog()
	default:
		s.handOn(e)
		s.drainBacklog()
	}
}

// drainBacklog forwards the requests that waited behind the parked one,
// until one parks in turn.
func (s *Stage[Req, Res]) drainBacklog() {
	for len(s.backlog) > 0 && s.parked == nil {
		e := s.backlog[0]
		s.backlog[0] = nil
		s.backlog = s.backlog[1:]
		s.Forward(e)
	}
	if len(s.backlog) == 0 {
		s.backlog = nil
	}
}

// onParkedCtxDone answers the parked request when its caller gave up.
func (s *Stage[Req, Res]) onParkedCtxDone() {
	e := s.parked
	if e == nil || e.Ctx.Err() == nil {
		return // stale: that request left already
	}
	if !s.inner.CancelWait(s.waiter) {
		return // the grant is on its way; onGrant answers e
	}
	s.unpark()
	s.Answer(e, e.Ctx.Err())
	s.drainBacklog()
}

// dropParked answers the parked request, and those waiting behind it, with
// err (restart, close).
func (s *Stage[Req, Res]) dropParked(err error) {
	backlog := s.backlog
	s.backlog = nil
	if s.parked != nil {
		s.inner.CancelWait(s.waiter) // if too late, onGrant gives the unit back
		s.Answer(s.unpark(), err)
	}
	for _, e := range backlog {
		s.Answer(e, err)
	}
}

// innerBroken answers e and closes the stage for good: the inner service
// reported a readiness error, so nothing sent to it can succeed.
func (s *Stage[Req, Res]) innerBroken(e *Envelope[Req, Res], err error) {
	cerr := s.closedError(err)
	if s.closing >= broken {
		cerr = s.closeErr // broken already: the first error stands
	}
	s.mb.Close(cerr) // first: the slot e frees must not go to a new caller
	s.Answer(e, cerr)
	s.breakOff(cerr) // answers the backlog too
}

// Break closes the stage for good because its inner service reported the
// readiness error err: everything the stage holds or queues, and every
// later reservation, gets a *troupe.ClosedError wrapping err; the calls it
// already handed on finish with their own outcomes, and the stage stops
// once they have (see Broken). For behaviors that reserve on the inner
// service themselves (Retry). Actor goroutine only.
func (s *Stage[Req, Res]) Break(err error) { s.breakOff(s.closedError(err)) }

// breakOff closes the stage with cerr because its inner service broke:
// admission closes, the parked request and those behind it are answered,
// the behavior's Fail answers what it keeps (it looks at Broken to leave
// what it handed on), and the stage stops once what it handed on has its
// outcome, as a draining one does (maybeStop).
func (s *Stage[Req, Res]) breakOff(cerr error) {
	if s.closing >= broken {
		return
	}
	s.closing, s.closeErr = broken, cerr
	s.mb.Close(cerr)
	s.draining.Store(true) // Recheck: the last call's outcome may stop it
	s.dropParked(cerr)
	s.beh.Fail(s, cerr)
	s.PauseRequests(s.paused) // what is queued is taken, to be answered
}

// Broken reports whether the stage's inner service broke (Break, or a
// readiness error met forwarding) and the stage waits for the calls it
// handed on before it stops. A Behavior's Fail is called then with the
// stage's *troupe.ClosedError: it answers the requests it keeps for itself
// (waiting in a line, for a rate, for a unit, for a retry's wait) and
// leaves those it sent on, whose outcomes still come; it is called again
// as the stage stops. Actor goroutine only.
func (s *Stage[Req, Res]) Broken() bool { return s.closing == broken }

// AnswerParked answers the request parked for the inner service with err,
// if there is one, and reports whether there was; those waiting behind it
// move up. Reconnect answers the request that waited for a connection that
// failed. Actor goroutine only.
func (s *Stage[Req, Res]) AnswerParked(err error) bool {
	if s.parked == nil {
		return false
	}
	s.inner.CancelWait(s.waiter) // if too late, onGrant gives the unit back
	s.Answer(s.unpark(), err)
	s.drainBacklog()
	return true
}

// SetInner replaces the inner service (Reconnect: a new connection). A
// request parked for the old one waits for the new one instead; a unit the
// old one grants too late is given back to it. Actor goroutine only.
func (s *Stage[Req, Res]) SetInner(in Inner[Req, Res]) {
	old := s.inner
	if old == in {
		return
	}
	parked := s.parked != nil
	if parked {
		// If the grant is on its way, its message names the old inner
		// service, and onGrant gives the unit back to it.
		old.CancelWait(s.waiter)
	}
	s.inner = in
	s.waiter, s.grant = s.newWaiter(in)
	if parked {
		e := s.unpark()
		s.park(e)
	}
}

// Escalate reports a failure of the stage to its host's supervisor, as a
// panic would, without panicking: the mailbox is suspended and the host's
// Strategy decides to restart the stage (after a delay, perhaps) or stop it.
// The requests the stage holds then get a *troupe.RestartError or a
// *troupe.ClosedError wrapping err. Actor goroutine only.
func (s *Stage[Req, Res]) Escalate(err error) {
	s.ent().failure = err
	if sup, ok := s.ctx.(interface{ EscalateFailure(reason, msg any) }); ok {
		sup.EscalateFailure(err, s.mb) // the mailbox the supervisor acts through
	}
}

// Parked reports whether a request waits in the stage for the inner
// service's readiness. Actor goroutine only.
func (s *Stage[Req, Res]) Parked() bool { return s.parked != nil }
