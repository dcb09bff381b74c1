package stagekit

// The caller's path: a request crossing a stage on its sender's goroutine
// while the stage is in its ordinary state (Config.CallerPath), without
// entering the actor. See the package doc ("What runs where").

// CallerAdmitter is implemented by behaviors that decide a request on the
// sender's goroutine while the stage is crossed there (Config.CallerPath):
// AdmitOnCaller reports whether the request may go on at once as it is,
// having spent what admitting it costs (a rate limit's unit). False sends
// it the actor's way, where Request decides it; so AdmitOnCaller admits
// only what leaves the stage in its ordinary state (a rate limit's last
// unit, after which it is Limited, is spent by the actor).
//
// AdmitOnCaller runs on senders' goroutines, several at once, beside the
// actor: it must be safe for concurrent use.
type CallerAdmitter interface {
	AdmitOnCaller() bool
}

// CallerRequester is implemented by behaviors whose Request can also run
// on the sender's goroutine while the stage is crossed there
// (Config.CallerPath), for a stage whose per-request work is its own (a
// retry's session) rather than a forward as it is.
//
// RequestOnCaller handles e, which the sender holds with its slot and with
// a unit of the inner service reserved for it, as Request would, and
// reports true: it sends e on with that unit (Stage.SendOnCaller) or gives
// the unit back and answers e (Stage.Respond); the slot is the behavior's
// to free. Or it reports false, having changed nothing, to leave e to the
// actor's path: a behavior whose admission is decided with the request's
// own work (an adaptive limit's gate, taken with the call's frame) declines
// the requests it does not admit; the runtime then gives the unit back and
// sends e the actor's way. A stage spawned with HoldUntilOutcome has put
// its own frame on e already, and must take every request. Ordinary runs
// on the actor after every message: it reports whether the behavior's
// state admits the caller's path (a retry with sessions in line for an
// inner unit does not: they go first).
//
// RequestOnCaller runs on senders' goroutines, several at once, beside the
// actor: it must be safe for concurrent use with the behavior's other
// methods.
type CallerRequester[Req, Res any] interface {
	RequestOnCaller(s *Stage[Req, Res], e *Envelope[Req, Res]) (taken bool)
	Ordinary() bool
}

// hooks are the optional methods of a stage's behavior that senders call,
// looked up once (out of line: most stages have none, and the Stage stays
// in its size class).
type hooks[Req, Res any] struct {
	send  SendHook[Req, Res]        // nil: none
	gate  WaitGate                  // nil: none
	admit CallerAdmitter            // nil: none, or no caller's path
	onReq CallerRequester[Req, Res] // the same
}

// hooksOf returns beh's hooks, or nil when it has none; those of the
// caller's path only when the stage has one.
func hooksOf[Req, Res any](beh Behavior[Req, Res], callerPath bool) *hooks[Req, Res] {
	var h hooks[Req, Res]
	h.send, _ = beh.(SendHook[Req, Res])
	h.gate, _ = beh.(WaitGate)
	if callerPath {
		h.admit, _ = beh.(CallerAdmitter)
		h.onReq, _ = beh.(CallerRequester[Req, Res])
	}
	if h.send == nil && h.gate == nil && h.admit == nil && h.onReq == nil {
		return nil
	}
	return &h
}

// updatePath says whether requests may cross the stage on their callers'
// goroutines (onCaller), once the actor has handled a message (actor):
// only in its ordinary state, with nothing parked, waiting behind a parked
// request, paused or closing, so that no request overtakes one the actor
// holds or queues.
func (s *Stage[Req, Res]) updatePath() {
	if !s.callerPath {
		return
	}
	ok := s.parked == nil && len(s.backlog) == 0 && !s.paused && s.closing == open &&
		(s.hooks == nil || s.hooks.onReq == nil || s.hooks.onReq.Ordinary())
	if s.onCaller.Load() != ok {
		s.onCaller.Store(ok)
	}
}

// forwardOnCaller hands e on to the inner service on the sender's
// goroutine, as the actor's Forward would with the inner service ready,
// without entering the actor, and reports true; or reports false, having
// changed nothing, when e must take the actor's path: the stage is not in
// its ordinary state (onCaller), requests are queued for the actor or it
// is handling a message (they go first: the message in hand may be a
// request, or what a request's outcome set off), e's caller gave up (the
// actor answers it), the inner service is not ready (the actor parks e and
// waits for it), or the behaviour does not admit e on the caller
// (CallerAdmitter, or a CallerRequester that declines).
//
// NOTE: it reads only what the actor publishes atomically (onCaller, the
// mailbox's counts), and changes only the slot counts and e, which the
// sender holds: the actor's own state is never touched off the actor.
func (s *Stage[Req, Res]) forwardOnCaller(e *Envelope[Req, Res]) bool {
	if !s.onCaller.Load() || s.mb.UserMessageCount() != 0 || s.mb.Running() || e.Ctx.Err() != nil {
		return false
	}
	if ok, err := s.inner.TryReserve(); !ok || err != nil {
		return false
	}
	h := s.hooks
	if h != nil && h.admit != nil && !h.admit.AdmitOnCaller() {
		s.inner.Unreserve()
		return false
	}
	if s.hold {
		if _, err := e.Push(s); err != nil {
			s.inner.Unreserve()
			return false
		}
	}
	if h != nil && h.onReq != nil {
		if h.onReq.RequestOnCaller(s, e) {
			return true
		}
		if s.hold {
			// Its own frame is on e: e cannot take the actor's path now.
			invariant("a HoldUntilOutcome stage's RequestOnCaller declined a request")
			s.inner.Unreserve()
			var zero Res
			e.Answer(zero, s.Rejected(ErrTooDeep))
			return true
		}
		s.inner.Unreserve()
		return false
	}
	if !s.hold {
		s.mb.Free()
	}
	s.SendOnCaller(e)
	return true
}

// SendOnCaller sends e to the inner service, with a unit reserved there,
// from a sender's goroutine (CallerRequester): SendInner, for the caller's
// path.
//
// Whoever held e before (the stage outside, whose actor may have sent it)
// holds it no more: it is let go first, as the actor's hand-on records the
// inner stage as e's holder, so that a stage that fails does not take e,
// which has gone on, for the request in its hands.
func (s *Stage[Req, Res]) SendOnCaller(e *Envelope[Req, Res]) {
	e.letGo()
	if in, ok := s.inner.(*stageInner[Req, Res]); ok {
		in.sendFrom(nil, e)
		return
	}
	s.inner.Send(e)
}
