package stagekit

import (
	"context"

	"github.com/troupe-go/troupe"
)

// Inner is the non-blocking side of a service: what a stage actor uses to
// talk to the service inside it without ever blocking. Stages, Func and
// troupetest's mock implement it; Adapt gives it to any troupe.Service.
//
// Reservations are units of capacity, all alike. Every unit taken by
// TryReserve or granted through ReserveAsync is spent by exactly one Send or
// given back by exactly one Unreserve. All methods are safe for concurrent use.
type Inner[Req, Res any] interface {
	// TryReserve takes one unit if the service is ready now. A non-nil error
	// means the service is broken.
	TryReserve() (bool, error)
	// ReserveAsync takes one unit now (granted) or puts w in line: w is then
	// notified with nil once a unit was taken for it, or with the error that
	// broke the service.
	ReserveAsync(w *Waiter) (granted bool, err error)
	// CancelWait takes w out of line; false means its notification is
	// already decided and on its way.
	CancelWait(w *Waiter) bool
	// Unreserve gives one unit back.
	Unreserve()
	// Send hands e over using one unit. It never blocks: the outcome comes
	// back through e's frames.
	Send(e *Envelope[Req, Res])
}

// InnerSider is implemented by services whose Inner side is a view of
// their own (stages): AsInner asks for it.
//
// Implementations must be safe for concurrent use.
type InnerSider[Req, Res any] interface {
	ActorsInner() Inner[Req, Res]
}

// AsInner returns svc's Inner side: the view it offers, svc itself when it
// implements Inner, otherwise an adapter (see Adapt).
func AsInner[Req, Res any](svc troupe.Service[Req, Res]) Inner[Req, Res] {
	if h, ok := svc.(handled[Req, Res]); ok {
		return h.actorsInner()
	}
	if s, ok := svc.(InnerSider[Req, Res]); ok {
		return s.ActorsInner()
	}
	if in, ok := svc.(Inner[Req, Res]); ok {
		return in
	}
	return Adapt(svc)
}

// ReserverFor is implemented by Inner sides that reserve on behalf of a
// request (Adapt's, whose background Reserve then sees the request's context
// values). A stage that waits for its inner service on behalf of a request
// calls ReserveAsyncFor with the request's context.
//
// Implementations must be safe for concurrent use.
type ReserverFor interface {
	ReserveAsyncFor(ctx context.Context, w *Waiter) (granted bool, err error)
}

// ReserveFor is ReserveAsyncFor for a stage that waits for in on behalf of
// the one request whose context is ctx, as a stage does when it parks a
// request: where in is a stage, its maximum wait bounds the wait and its
// WaitGate may refuse the request at once, with an error matching
// troupe.ErrFull that the caller answers that request with (the inner
// service is not broken).
func ReserveFor[Req, Res any](ctx context.Context, in Inner[Req, Res], w *Waiter) (bool, error) {
	if si, ok := in.(*stageInner[Req, Res]); ok {
		return si.reserveFor(ctx, w)
	}
	return ReserveAsyncFor(ctx, in, w)
}

// ReserveAsyncFor is in.ReserveAsync(w) on behalf of a request whose context
// is ctx: its values reach the inner service's Reserve where in supports it
// (ReserverFor), its cancellation never does.
func ReserveAsyncFor[Req, Res any](ctx context.Context, in Inner[Req, Res], w *Waiter) (bool, error) {
	if r, ok := in.(ReserverFor); ok {
		return r.ReserveAsyncFor(ctx, w)
	}
	return in.ReserveAsync(w)
}
