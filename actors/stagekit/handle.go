package stagekit

import (
	"context"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/internal/mailbox"
)

// Reserve waits for a free slot in the stage's mailbox and returns a permit
// for it (troupe.Service). It honours ctx; once the stage is
// closed it returns a *troupe.ClosedError.
//
// A Stage has no call method: only the permit can call. Its two
// other sides, the permit's reservation and the Inner protocol the stage
// outside it uses, are separate views of the same memory, so that neither
// can be misused through the handle.
//
// A caller that waits for a slot of a stage with a permit out may find one held by a permit someone dropped: see
// WithDroppedPermitCheck for how it comes back.
func (s *Stage[Req, Res]) Reserve(ctx context.Context) (*troupe.Permit[Req, Res], error) {
	ok, err := s.mb.TryReserve()
	if err != nil {
		return nil, err
	}
	if !ok {
		if err := s.refuseWait(ctx); err != nil {
			return nil, err
		}
		t := s.droppedWatch()
		err = s.mb.Reserve(ctx)
		if t != nil {
			t.Stop()
		}
		if err != nil {
			return nil, err
		}
	}
	return s.Permit(), nil
}

// ReserveAndCall reserves a slot and sends req with it in one step: what
// troupe.Do does with a stage. When no slot is free, the request itself
// waits in the stage's line, and the goroutine that frees a slot sends it:
// the caller waits once, for its outcome, where Reserve then Call would wait
// twice. It honours ctx like Reserve and Call.
func (s *Stage[Req, Res]) ReserveAndCall(ctx context.Context, req Req) (Res, error) {
	var zero Res
	if err := ctx.Err(); err != nil {
		return zero, s.Rejected(err)
	}
	ok, err := s.mb.TryReserve()
	if err != nil {
		return zero, s.Rejected(err)
	}
	e := newRoot(s, ctx, req)
	in := (*stageInner[Req, Res])(s)
	inLine := false
	if ok {
		in.Send(e)
	} else {
		e.call.target = in
		granted, err := false, s.refuseWait(ctx)
		if err == nil {
			granted, err = s.mb.ReserveAsyncBounded(e.call.slot)
		}
		switch {
		case err != nil:
			c := e.call
			e.Unref() // the path never started
			e.Unref()
			s.answered(c)
			return zero, s.Rejected(err)
		case granted:
			in.Send(e)
		default:
			inLine = true
		}
	}
	var t *droppedCheck
	if inLine {
		t = s.droppedWatch()
	}
	res, err := e.wait(ctx)
	if t != nil {
		t.Stop()
	}
	if inLine && ctx.Err() != nil && s.mb.CancelWait(e.call.slot) {
		e.Unref() // the caller gave up in line: the path never started
	}
	e.Unref()
	return res, err
}

// Permit issues a permit for a slot of the stage's mailbox that the caller
// has already reserved (mailbox TryReserve or Reserve): for stage packages
// that reserve their own way (LoadShed).
func (s *Stage[Req, Res]) Permit() *troupe.Permit[Req, Res] {
	return s.permits.Issue((*reservation[Req, Res])(s))
}

// ActorsInner returns the stage's Inner side, for the stage outside it
// (AsInner finds it).
func (s *Stage[Req, Res]) ActorsInner() Inner[Req, Res] { return (*stageInner[Req, Res])(s) }

// reservation is the stage seen by its permits (troupe.Reservation).
type reservation[Req, Res any] Stage[Req, Res]

// Call sends req with a reserved slot and waits for the outcome, running the
// downstream call when it is handed back. When ctx ends first, Call returns
// ctx's error; the request is answered with it wherever it is.
func (r *reservation[Req, Res]) Call(ctx context.Context, req Req) (Res, error) {
	s := (*Stage[Req, Res])(r)
	if err := ctx.Err(); err != nil {
		s.mb.Free()
		var zero Res
		return zero, s.Rejected(err)
	}
	e := newRoot(s, ctx, req)
	(*stageInner[Req, Res])(s).Send(e)
	res, err := e.wait(ctx)
	e.Unref()
	return res, err
}

// Release gives a reserved slot back.
func (r *reservation[Req, Res]) Release() {
	r.mb.Free()
}

// stageInner is the stage seen by the stage outside it (Inner).
type stageInner[Req, Res any] Stage[Req, Res]

func (i *stageInner[Req, Res]) TryReserve() (bool, error) { return i.mb.TryReserve() }

func (i *stageInner[Req, Res]) ReserveAsync(w *Waiter) (bool, error) {
	return i.mb.ReserveAsync(w.mb())
}

// reserveFor is ReserveAsync for a request, with context ctx, that the
// stage outside parks: the stage's MaxWait bounds it, and its WaitGate may
// refuse it at once.
func (i *stageInner[Req, Res]) reserveFor(ctx context.Context, w *Waiter) (bool, error) {
	if ok, err := i.mb.TryReserve(); ok || err != nil {
		return ok, err
	}
	if err := (*Stage[Req, Res])(i).refuseWait(ctx); err != nil {
		return false, err
	}
	return i.mb.ReserveAsyncBounded(w.mb())
}

func (i *stageInner[Req, Res]) CancelWait(w *Waiter) bool { return i.mb.CancelWait(w.mb()) }

func (i *stageInner[Req, Res]) Unreserve() { i.mb.Free() }

// Send posts e into a reserved slot. Once the stage is closed, e is answered
// with the close error at once and the slot freed: nothing enters a closed
// stage, not even with a unit reserved before the close.
func (i *stageInner[Req, Res]) Send(e *Envelope[Req, Res]) { i.sendFrom(nil, e) }

// sendFrom is Send from the actor of mailbox from, on its goroutine (nil:
// from anywhere); see mailbox.Mailbox.PostFrom. It records this stage as e's holder
// in place of the sender, or answers e (NOTE: handOn does not clear the
// holder first; see letGo).
func (i *stageInner[Req, Res]) sendFrom(from *mailbox.Mailbox, e *Envelope[Req, Res]) {
	s := (*Stage[Req, Res])(i)
	if s.mb.Closed() {
		s.mb.Free()
		var zero Res
		e.Answer(zero, s.Rejected(s.mb.CloseErr()))
		return
	}
	if s.obs != nil {
		s.sendObserved(from, e)
		return
	}
	if s.hooks != nil && s.hooks.send != nil {
		if err := s.hooks.send.OnSend(s, e); err != nil {
			// NOTE: SendHook's contract; stages/breaker refuses calls here.
			s.mb.Free()
			var zero Res
			e.Answer(zero, err)
			return
		}
	}
	if s.callerPath && s.forwardOnCaller(e) {
		return
	}
	e.holder.Store(s.mb)
	if err := s.mb.PostFrom(from, e); err != nil {
		e.holder.Store(nil)
		var zero Res
		e.Answer(zero, err)
	}
}
