package troupetest

import (
	"context"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/mailbox"
)

// Reserve waits until the handle allows a reservation (troupe.Service).
func (m *Mock[Req, Res]) Reserve(ctx context.Context) (*troupe.Permit[Req, Res], error) {
	ch := make(chan error, 1)
	w := mailbox.NewWaiter(func(err error) { ch <- err })
	granted, err := m.ReserveAsync(w)
	if err != nil {
		return nil, err
	}
	if !granted {
		select {
		case err = <-ch:
		case <-ctx.Done():
			if !m.CancelWait(w) {
				if <-ch == nil {
					m.Unreserve()
				}
			}
			return nil, ctx.Err()
		}
		if err != nil {
			return nil, err
		}
	}
	return m.h.permits.Issue(m), nil
}

// Call hands req to the test and waits for its answer (troupe.Reservation
// and actors.Leaf); it gives up when ctx ends.
func (m *Mock[Req, Res]) Call(ctx context.Context, req Req) (Res, error) {
	m.h.calls.Add(1)
	r := &Request[Req, Res]{Value: req, Ctx: ctx, reply: make(chan outcome[Res], 1)}
	select {
	case m.h.requests <- r:
	case <-ctx.Done():
		var zero Res
		return zero, ctx.Err()
	}
	select {
	case o := <-r.reply:
		return o.res, o.err
	case <-ctx.Done():
		var zero Res
		return zero, ctx.Err()
	}
}

// Release gives the reservation back (troupe.Reservation).
func (m *Mock[Req, Res]) Release() { m.Unreserve() }

// TryReserve implements actors.Inner.
func (m *Mock[Req, Res]) TryReserve() (bool, error) { return m.h.reserve(nil) }

// ReserveAsync implements actors.Inner.
func (m *Mock[Req, Res]) ReserveAsync(w *mailbox.Waiter) (bool, error) { return m.h.reserve(w) }

// reserve takes an allowed unit, or puts w (when not nil) in line.
func (h *Handle[Req, Res]) reserve(w *mailbox.Waiter) (bool, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.checkLocked(); err != nil {
		return false, err
	}
	if h.allowed > 0 && len(h.waiters) == 0 {
		h.allowed--
		return true, nil
	}
	if w != nil {
		h.waiters = append(h.waiters, w)
	}
	return false, nil
}

// CancelWait implements actors.Inner.
func (m *Mock[Req, Res]) CancelWait(w *mailbox.Waiter) bool {
	h := m.h
	h.mu.Lock()
	defer h.mu.Unlock()
	for i, x := range h.waiters {
		if x == w {
			h.waiters = append(h.waiters[:i], h.waiters[i+1:]...)
			return true
		}
	}
	return false
}

// Unreserve implements actors.Inner: the unit is allowed again.
func (m *Mock[Req, Res]) Unreserve() { m.h.Allow(1) }

// Send implements actors.Inner: the caller of e runs the call.
func (m *Mock[Req, Res]) Send(e *actors.Envelope[Req, Res]) { e.HandToCaller(m) }

// Name names the mock in panic errors.
func (m *Mock[Req, Res]) Name() string { return "mock" }

var _ actors.Inner[int, int] = (*Mock[int, int])(nil)
