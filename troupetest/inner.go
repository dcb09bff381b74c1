package troupetest

import (
	"context"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors/stagekit"
)

// Reserve waits until the handle allows a reservation (troupe.Service).
func (m *Mock[Req, Res]) Reserve(ctx context.Context) (*troupe.Permit[Req, Res], error) {
	ch := make(chan error, 1)
	w := stagekit.NewWaiter(func(err error) { ch <- err })
	mi := (*side[Req, Res])(m)
	granted, err := mi.ReserveAsync(w)
	if err != nil {
		return nil, err
	}
	if !granted {
		select {
		case err = <-ch:
		case <-ctx.Done():
			if !mi.CancelWait(w) {
				if <-ch == nil {
					mi.Unreserve()
				}
			}
			return nil, ctx.Err()
		}
		if err != nil {
			return nil, err
		}
	}
	return m.h.permits.Issue((*side[Req, Res])(m)), nil
}

// ActorsInner returns the mock's Inner side, for the stage outside it.
func (m *Mock[Req, Res]) ActorsInner() stagekit.Inner[Req, Res] { return (*side[Req, Res])(m) }

// side is the mock seen by its permits (troupe.Reservation), by the stage
// outside it (stagekit.Inner) and by the caller running its call
// (stagekit.Leaf): none of these can be used through the Mock itself, so a
// test cannot call it without readiness either.
type side[Req, Res any] Mock[Req, Res]

// Call hands req to the test and waits for its answer (troupe.Reservation
// and stagekit.Leaf); it gives up when ctx ends.
func (m *side[Req, Res]) Call(ctx context.Context, req Req) (Res, error) {
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
func (m *side[Req, Res]) Release() { m.Unreserve() }

// TryReserve implements stagekit.Inner.
func (m *side[Req, Res]) TryReserve() (bool, error) { return m.h.reserve(nil) }

// ReserveAsync implements stagekit.Inner.
func (m *side[Req, Res]) ReserveAsync(w *stagekit.Waiter) (bool, error) { return m.h.reserve(w) }

// reserve takes an allowed unit, or puts w (when not nil) in line.
func (h *Handle[Req, Res]) reserve(w *stagekit.Waiter) (bool, error) {
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

// CancelWait implements stagekit.Inner.
func (m *side[Req, Res]) CancelWait(w *stagekit.Waiter) bool {
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

// Unreserve implements stagekit.Inner: the unit is allowed again.
func (m *side[Req, Res]) Unreserve() { m.h.Allow(1) }

// Send implements stagekit.Inner: the caller of e runs the call.
func (m *side[Req, Res]) Send(e *stagekit.Envelope[Req, Res]) { e.HandToCaller(m) }

// Name names the mock in panic errors.
func (m *side[Req, Res]) Name() string { return "mock" }

var _ stagekit.Inner[int, int] = (*side[int, int])(nil)
