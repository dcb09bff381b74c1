package stagekit

import (
	"context"
	"slices"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/troupe-go/troupe"
)

// closeMsg asks the stage actor to drain (abort=false) or to answer
// everything with ErrClosed and stop (abort=true).
type closeMsg struct{ abort bool }

var (
	drainMsg = &closeMsg{}
	abortMsg = &closeMsg{abort: true}
)

// Close closes the stage (troupe.Closer): reservations fail with a
// *troupe.ClosedError at once, and permits already issued fail when called;
// the requests already accepted are handed on as usual, and the calls that
// entered by this stage run to their outcome, until ctx is done. Then what
// the stage still holds is answered with the same error, and the calls that
// entered by it and still run are abandoned: the context of their work is
// cancelled, and its error (what their callers get, if the work honours it)
// is that *troupe.ClosedError. When ctx is already done, all this happens at
// once.
//
// Close returns once the actor has stopped: nil when everything drained;
// otherwise an error that matches ctx's error and, when calls were
// abandoned, a *troupe.AbandonedError saying how many.
// Close does not close the inner service.
func (s *Stage[Req, Res]) Close(ctx context.Context) error {
	s.closeOnce.Do(func() {
		s.mb.Close(s.closedError(nil))
		if ctx.Err() == nil {
			s.mb.PostControl(drainMsg)
		}
	})
	if ctx.Err() == nil {
		select {
		case <-s.done:
			return nil
		case <-ctx.Done():
		}
	}
	s.mb.PostUrgent(abortMsg) // reaches a stage suspended by its supervisor too
	<-s.done
	if e := s.entries.Load(); e != nil && e.abandoned > 0 {
		return &troupe.AbandonedError{Stage: s.name, Calls: e.abandoned, Cause: ctx.Err()}
	}
	return ctx.Err()
}

// answered counts off a caller that entered by the stage and now has its
// outcome (or gave up); a draining stage looks again whether it can stop.
// Safe from any goroutine; s may be nil (a call that entered no stage).
func (s *Stage[Req, Res]) answered(c *callState[Req, Res]) {
	if s != nil && s.ent().waitingShard(c).Add(-1) == 0 {
		s.Recheck() // its shard is empty: maybe every shard is
	}
}

func (s *Stage[Req, Res]) onClose(m *closeMsg) {
	if m.abort {
		err := s.closedError(nil)
		if s.closing == broken {
			err = s.closeErr // what the break answered with: why it closed
		}
		s.abort(err)
	} else if s.closing == open {
		s.closing = draining
		s.draining.Store(true)
	}
}

// recheckMsg asks a draining stage to look again whether it holds nothing.
type recheckMsg struct{}

// Recheck tells a draining stage that its behavior may have become idle on
// another goroutine (the last call a timeout watched finished where its
// outcome was produced): the stage looks again whether it can stop. It
// costs an atomic load unless the stage is draining. Safe from any
// goroutine.
func (s *Stage[Req, Res]) Recheck() {
	if s.draining.Load() {
		s.mb.PostControl(recheckMsg{})
	}
}

// abort answers everything the stage holds with err and stops the actor;
// what is still queued is answered by the mailbox as it stops.
func (s *Stage[Req, Res]) abort(err error) {
	if s.closing == aborting {
		return
	}
	s.closing, s.closeErr = aborting, err
	s.mb.Close(err)
	s.dropParked(err)
	s.beh.Fail(s, err)
	s.stopSelf()
}

// stopSelf stops the actor by posting protoactor's Stop straight into its
// mailbox. NOTE: not ctx.Stop(ctx.Self()): that resolves the PID, which
// caches the process in the PID object, and protoactor's children set keeps
// removed PIDs in its backing array (PIDSet.Remove does not clear the slot),
// so the stopped stage would stay reachable from its host's supervisor.
func (s *Stage[Req, Res]) stopSelf() { s.mb.PostSystemMessage(&actor.Stop{}) }

// maybeStop stops a draining or broken stage once it holds nothing.
func (s *Stage[Req, Res]) maybeStop() {
	if (s.closing != draining && s.closing != broken) || s.parked != nil || len(s.backlog) > 0 || s.waitingCallers() > 0 || s.mb.Stats().Queued > 0 || !s.beh.Idle() {
		return
	}
	if s.closing == draining {
		s.closeErr = s.closedError(nil)
	}
	s.closing = aborting // nothing left to drain; anything late is refused
	s.stopSelf()
}

// onStopped ends the stage: its mailbox refuses everything from now on and
// answers what it still queues; the parked and kept requests are answered;
// the supervisor's stop after a failure says so in the error.
func (s *Stage[Req, Res]) onStopped() {
	err := s.closeErr
	if err == nil {
		err = s.closedError(s.failureOf())
	}
	s.mb.Close(err)
	s.dropCulprit(err)
	s.dropParked(err)
	s.beh.Fail(s, err)
	s.mb.Stop() // answers what is still queued
	// What it held is answered: the callers that entered here and still
	// wait are those whose work runs below, which Close gave up on (a
	// drained or broken stage stops once there are none). Count them,
	// then tell their work to stop (counted first, so none ends because it
	// was told before it is counted).
	// A stage stopped by its supervisor leaves the work below it alone.
	if s.closeErr != nil {
		if n := s.waitingCallers(); n > 0 {
			s.ent().abandoned = n
			s.closeSignalOf().cancel(err)
		}
	}
	s.host.forget(s)
	close(s.done)
}

// panicked runs on the actor goroutine when a message panicked, before the
// failure goes to the supervisor. Every request the stage holds (the one
// being processed, the parked one and those behind it, those its behavior
// keeps) is answered at once with a *troupe.RestartError: the error is known
// now, and the supervisor's backoff before the restart is no reason to make
// the callers wait. What is still queued is carried over to the restarted
// actor, or answered with a *troupe.ClosedError if the supervisor stops it.
func (s *Stage[Req, Res]) panicked(msg any, reason any) {
	ent := s.ent()
	ent.failure = newPanicError(s.name, reason)
	e, _ := msg.(*Envelope[Req, Res])
	for _, c := range []*Envelope[Req, Res]{e, s.inHand} {
		if c != nil && c != s.kept && c.holder.Load() == s.mb && !s.holds(c) && !slices.Contains(ent.culprits, c) {
			ent.culprits = append(ent.culprits, c)
		}
	}
	s.inHand, s.kept = nil, nil
	err := &troupe.RestartError{Stage: s.name, Cause: ent.failure}
	s.dropCulprit(err)
	s.dropParked(err)
	if perr := Guard(s.name, func() { s.beh.Fail(s, err) }); perr != nil {
		invariant("behavior Fail panicked: " + perr.Error())
	}
}

// holds reports whether e waits in the stage for the inner service (parked,
// or behind the parked one): dropParked answers it, not dropCulprit.
func (s *Stage[Req, Res]) holds(e *Envelope[Req, Res]) bool {
	if e == s.parked {
		return true
	}
	for _, x := range s.backlog {
		if x == e {
			return true
		}
	}
	return false
}

// dropCulprit answers the requests that were in hand when the stage failed.
func (s *Stage[Req, Res]) dropCulprit(err error) {
	ent := s.entries.Load()
	if ent == nil {
		return // never failed, never served a call
	}
	cs := ent.culprits
	ent.culprits = nil
	for _, e := range cs {
		s.Answer(e, err)
	}
}

// dropped answers a message the stopped stage will never process.
func (s *Stage[Req, Res]) dropped(msg any, err error) {
	switch m := msg.(type) {
	case *Envelope[Req, Res]:
		if s.hold {
			s.mb.Free() // never taken, so its slot's frame was never pushed
		}
		s.Answer(m, err)
	case *grantMsg[Req, Res]:
		if m.err == nil {
			m.inner.Unreserve()
		}
	case *closeMsg, *parkedCtxDone, recheckMsg:
	default:
		s.beh.Dropped(msg, err)
	}
}
