package troupe

import "context"

// Service is something requests can be sent to. Its readiness is a
// reservation: Reserve waits until the service can accept one more request and
// returns a [Permit] holding that capacity. Only the permit can call.
//
// Reserve honours ctx: when ctx is done before capacity is available it
// returns ctx's error and holds nothing. A Reserve error other
// than a context error means the service is broken: stop using it.
//
// Copying a Service value (or the handle behind it) copies no reservation:
// permits are separate values. Implementations must be safe for
// concurrent use.
type Service[Req, Res any] interface {
	Reserve(ctx context.Context) (*Permit[Req, Res], error)
}

// Reservation is the issuing service's side of a [Permit]: what a Service
// implementation hands to [PermitSource.Issue]. The Permit guarantees that
// exactly one of Call or Release is invoked, at most once, per issued permit;
// or, when the permit is dropped unused, that Release is invoked by the
// garbage-collection safety net.
//
// A Reservation may be shared by many permits (a stage whose slots are
// interchangeable passes itself), so it must be safe for concurrent use.
type Reservation[Req, Res any] interface {
	// Call sends req using one unit of reserved capacity and returns its
	// outcome. It must honour ctx.
	Call(ctx context.Context, req Req) (Res, error)
	// Release gives one unit of reserved capacity back, unused.
	Release()
}

// Closer is implemented by services that own resources (actors, timers).
// Close stops accepting work, answers every accepted request (with
// [ErrClosed] when it cannot be completed before ctx is done), returns every
// reserved unit of capacity and releases the resources. It is safe to call
// more than once; a call once the service has stopped returns nil.
//
// Implementations must be safe for concurrent use.
type Closer interface {
	Close(ctx context.Context) error
}

// Do reserves capacity on svc, sends req with the permit and returns the
// outcome: the one-line form of Reserve followed by Permit.Call, for callers
// who do not need to separate the two.
//
// A service that can reserve and call in one step (troupe's stages can: the
// request then waits in the stage's line itself) is asked to.
func Do[Req, Res any](ctx context.Context, svc Service[Req, Res], req Req) (Res, error) {
	if st, ok := svc.(*Stack[Req, Res]); ok {
		// The common case, without the dynamic interface lookup below (a
		// hash lookup per call; docs/decisions.md has its cost).
		return st.ReserveAndCall(ctx, req)
	}
	if o, ok := svc.(reserveAndCaller[Req, Res]); ok {
		return o.ReserveAndCall(ctx, req)
	}
	p, err := svc.Reserve(ctx)
	if err != nil {
		var zero Res
		return zero, err
	}
	return p.Call(ctx, req)
}

// reserveAndCaller is a service that reserves and calls in one step, which
// Do uses when a service has it: a request that must wait for a unit then
// waits in the service's own line and is sent by whoever frees one.
type reserveAndCaller[Req, Res any] interface {
	ReserveAndCall(context.Context, Req) (Res, error)
}
