package stagekit

// handle processes a request or a control message (actor goroutine).
func (s *Stage[Req, Res]) handle(msg any) {
	switch m := msg.(type) {
	case *Envelope[Req, Res]:
		s.onRequest(m)
	case *grantMsg[Req, Res]:
		s.onGrant(m)
	case *parkedCtxDone:
		s.onParkedCtxDone()
	case *closeMsg:
		s.onClose(m)
	case recheckMsg: // the caller runs maybeStop
	default:
		s.beh.Control(s, m)
	}
}

// onRequest handles a request taken from the mailbox.
func (s *Stage[Req, Res]) onRequest(e *Envelope[Req, Res]) {
	if s.hold {
		if _, err := e.Push(s); err != nil {
			s.mb.Free()
			var zero Res
			e.Answer(zero, s.Rejected(err))
			return
		}
	}
	if s.closing >= broken {
		s.Answer(e, s.closeErr)
		return
	}
	if err := e.Ctx.Err(); err != nil {
		s.Answer(e, err) // its caller gave up while it was queued
		return
	}
	s.beh.Request(s, e)
	if s.kept != nil {
		s.kept = nil
	}
}

// Keep tells the stage that its behavior keeps e, the request its Request
// is handling now (actor goroutine only): should the stage fail before
// Request returns (an inner service's readiness panics), the behavior's
// Fail answers e, not the stage. A behavior that keeps a request and then
// calls the inner service in the same Request must call it first;
// otherwise e would be answered twice.
func (s *Stage[Req, Res]) Keep(e *Envelope[Req, Res]) { s.kept = e }

// Complete is the hook of a HoldUntilOutcome stage's frames: the outcome is
// delivered, so the slot is free, unless leaf work still runs for the same
// caller (an outcome forced past it, see runLeaf and Envelope.Detach): then
// it is freed when that work ends; or unless the call's context carries a
// Hold that keeps the outcome (see WithHold): then it is freed when the
// Hold is released.
func (s *Stage[Req, Res]) Complete(e *Envelope[Req, Res], f *Frame[Req, Res], out Outcome[Res]) Outcome[Res] {
	if !e.root.call.keepSlot(s.mb) && !(holding.Load() && keepSlot(f.ctx, out.Res, out.Err, s.mb)) {
		s.mb.Free()
	}
	return out
}

// Answer ends the path of a request the stage holds with an error, freeing
// its slot (the behavior's request is not handed on).
//
// With an observer attached, this is an EventRejected (see Rejecter for its
// Reason); a panic in the observer joins err.
func (s *Stage[Req, Res]) Answer(e *Envelope[Req, Res], err error) {
	var zero Res
	s.Respond(e, zero, s.Rejected(err))
}

// FreeSlot frees the slot of a request the stage kept (Keep) and then sent
// on itself, with a frame of its own on top (Ride), once it has the
// request's outcome: Respond's freeing without its answer, which goes on
// from the frame instead. A HoldUntilOutcome stage's slot is freed by the
// runtime's frame, not here.
func (s *Stage[Req, Res]) FreeSlot() {
	if !s.hold {
		s.mb.Free()
	}
}

// Respond ends the path of a request the stage holds with an outcome,
// freeing its slot.
func (s *Stage[Req, Res]) Respond(e *Envelope[Req, Res], res Res, err error) {
	if !s.hold {
		s.mb.Free()
	}
	e.Answer(res, err)
}
