package actors

import "context"

// Forward hands e, which the stage holds, on to the inner service. When the
// inner service is ready the request goes at once and the stage's slot is
// freed (unless the stage holds slots until the outcome). When it is not,
// the stage parks e, keeping its slot, and takes no further requests until
// the inner service grants a unit, which arrives as a control message; the
// response path keeps flowing meanwhile (SPEC ACT2, ACT3, ACT4). An inner
// readiness error breaks the stage (CORE7): e and everything queued get a
// *troupe.ClosedError wrapping it.
func (s *Stage[Req, Res]) Forward(e *Envelope[Req, Res]) {
	ok, err := s.inner.TryReserve()
	switch {
	case err != nil:
		s.innerBroken(e, err)
	case ok:
		s.handOn(e)
	default:
		s.park(e)
	}
}

// handOn sends e to the inner service with a unit reserved there.
func (s *Stage[Req, Res]) handOn(e *Envelope[Req, Res]) {
	if !s.hold {
		s.mb.Free()
	}
	e.holder.Store(nil)
	s.inner.Send(e)
}

func (s *Stage[Req, Res]) park(e *Envelope[Req, Res]) {
	if s.parked != nil {
		invariant("stage parked a second request")
	}
	s.parked = e
	s.mb.SetUserPaused(true)
	granted, err := s.inner.ReserveAsync(s.waiter)
	switch {
	case err != nil:
		s.unpark()
		s.innerBroken(e, err)
	case granted:
		s.unpark()
		s.handOn(e)
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

// granted is the waiter's callback: it runs on the goroutine that freed a
// unit of the inner service, so it only posts.
func (s *Stage[Req, Res]) granted(err error) {
	if err == nil {
		s.mb.PostControl(s.grant)
		return
	}
	s.mb.PostControl(&grantMsg{err: err})
}

func (s *Stage[Req, Res]) onGrant(m *grantMsg) {
	e := s.unpark()
	switch {
	case e == nil:
		// The parked request left (restart, close) after its grant was
		// decided: give the unit back.
		if m.err == nil {
			s.inner.Unreserve()
		}
	case m.err != nil:
		s.innerBroken(e, m.err)
	case e.Ctx.Err() != nil:
		s.inner.Unreserve()
		s.Answer(e, e.Ctx.Err())
	default:
		s.handOn(e)
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
}

// dropParked answers the parked request with err (restart, close).
func (s *Stage[Req, Res]) dropParked(err error) {
	if s.parked == nil {
		return
	}
	s.inner.CancelWait(s.waiter) // if too late, onGrant gives the unit back
	s.Answer(s.unpark(), err)
}

// innerBroken answers e and closes the stage for good: the inner service
// reported a readiness error, so nothing sent to it can succeed (CORE7, B4).
func (s *Stage[Req, Res]) innerBroken(e *Envelope[Req, Res], err error) {
	cerr := s.closedError(err)
	s.mb.Close(cerr) // first: the slot e frees must not go to a new caller
	s.Answer(e, cerr)
	s.abort(cerr)
}

// Break closes the stage for good because its inner service reported the
// readiness error err (CORE7): everything the stage holds or queues, and
// every later reservation, gets a *troupe.ClosedError wrapping err. For
// behaviors that reserve on the inner service themselves (Retry). Actor
// goroutine only.
func (s *Stage[Req, Res]) Break(err error) { s.abort(s.closedError(err)) }
