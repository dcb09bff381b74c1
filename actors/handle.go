package actors

import (
	"context"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/mailbox"
)

// Reserve waits for a free slot in the stage's mailbox and returns a permit
// for it (troupe.Service). It honours ctx (SPEC CORE1); once the stage is
// closed it returns a *troupe.ClosedError.
func (s *Stage[Req, Res]) Reserve(ctx context.Context) (*troupe.Permit[Req, Res], error) {
	if err := s.mb.Reserve(ctx); err != nil {
		return nil, err
	}
	return s.permits.Issue(s), nil
}

// Call sends req with a reserved slot and waits for the outcome, running the
// downstream call when it is handed back (troupe.Reservation). When ctx ends
// first, Call returns ctx's error; the request is answered with it wherever
// it is.
func (s *Stage[Req, Res]) Call(ctx context.Context, req Req) (Res, error) {
	if err := ctx.Err(); err != nil {
		s.mb.Free()
		var zero Res
		return zero, err
	}
	e := newRoot[Req, Res](s.roots, ctx, req)
	s.Send(e)
	res, err := e.wait(ctx)
	e.Unref()
	return res, err
}

// Release gives a reserved slot back (troupe.Reservation).
func (s *Stage[Req, Res]) Release() { s.mb.Free() }

// TryReserve implements Inner.
func (s *Stage[Req, Res]) TryReserve() (bool, error) { return s.mb.TryReserve() }

// ReserveAsync implements Inner.
func (s *Stage[Req, Res]) ReserveAsync(w *mailbox.Waiter) (bool, error) {
	return s.mb.ReserveAsync(w)
}

// CancelWait implements Inner.
func (s *Stage[Req, Res]) CancelWait(w *mailbox.Waiter) bool { return s.mb.CancelWait(w) }

// Unreserve implements Inner.
func (s *Stage[Req, Res]) Unreserve() { s.mb.Free() }

// Send posts e into a reserved slot (Inner). Once the stage is closed, e is
// answered with the close error at once and the slot freed: nothing enters
// a closed stage, not even with a unit reserved before the close.
func (s *Stage[Req, Res]) Send(e *Envelope[Req, Res]) {
	if s.mb.Closed() {
		s.mb.Free()
		var zero Res
		e.Answer(zero, s.mb.CloseErr())
		return
	}
	if s.send != nil {
		if err := s.send.OnSend(s, e); err != nil {
			s.mb.Free()
			var zero Res
			e.Answer(zero, err)
			return
		}
	}
	e.holder.Store(s.mb)
	if err := s.mb.Post(e); err != nil {
		e.holder.Store(nil)
		var zero Res
		e.Answer(zero, err)
	}
}
