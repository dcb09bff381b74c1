package steer

import (
	"context"
	"fmt"
	"runtime/debug"

	"github.com/troupe-go/troupe"
)

// Picker chooses the service a request goes to: an index into the services
// given to New, of which there are n. An index out of range is that call's
// error (ErrNoRoute). It runs on the caller's goroutine, so it must be
// safe for concurrent use; it must not block.
type Picker[Req any] func(req Req, n int) int

// Steer routes each request to one of its services, chosen by a Picker of
// the request. It is a troupe.Service, safe for concurrent use.
type Steer[Req, Res any] struct {
	pick    Picker[Req]
	svcs    []troupe.Service[Req, Res]
	do      []func(context.Context, Req) (Res, error) // svcs' one-step calls
	permits troupe.PermitSource[Req, Res]
}

// New returns a Steer over services, in the order pick indexes them. No
// service, a nil one, or a nil pick is an error matching
// troupe.ErrBadConfig. The Steer does not own the services: closing them is
// the caller's business.
func New[Req, Res any](pick Picker[Req], services ...troupe.Service[Req, Res]) (*Steer[Req, Res], error) {
	if pick == nil {
		return nil, &troupe.ConfigError{Stage: "steer", Option: "picker", Why: "nil"}
	}
	if len(services) == 0 {
		return nil, &troupe.ConfigError{Stage: "steer", Option: "services", Why: "none given"}
	}
	s := &Steer[Req, Res]{pick: pick, svcs: append([]troupe.Service[Req, Res](nil), services...)}
	s.do = make([]func(context.Context, Req) (Res, error), len(services))
	for i, svc := range services {
		if svc == nil {
			return nil, &troupe.ConfigError{Stage: "steer", Option: fmt.Sprintf("service %d", i), Why: "nil"}
		}
		s.do[i] = oneStep(svc)
	}
	return s, nil
}

// Layer returns a layer that puts a Steer over the service inside it and
// others: the inner service is index 0, others follow from index 1. It
// spawns nothing (the host is not used), and does not own others. It is
// safe for concurrent use.
func Layer[Req, Res any](pick Picker[Req], others ...troupe.Service[Req, Res]) troupe.Layer[Req, Res] {
	return troupe.LayerFunc[Req, Res](func(_ troupe.Host, inner troupe.Service[Req, Res]) (troupe.Service[Req, Res], error) {
		return New(pick, append([]troupe.Service[Req, Res]{inner}, others...)...)
	})
}

// Len returns the number of services.
func (s *Steer[Req, Res]) Len() int { return len(s.svcs) }

// Reserve returns a permit at once (unless ctx is done): the Steer cannot
// know which service a request goes to before it has the request, so the
// permit holds no inner reservation. Its Call picks the service and waits
// for that service's readiness, honouring the call's context, then calls
// it; Release does nothing. ReserveFor reserves on the chosen service
// itself.
func (s *Steer[Req, Res]) Reserve(ctx context.Context) (*troupe.Permit[Req, Res], error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return s.permits.Issue((*route[Req, Res])(s)), nil
}

// ReserveFor picks the service for req and reserves on it, waiting for its
// readiness as its Reserve does: the permit returned is the chosen
// service's own, for sending req (any request sent with it goes to that
// service). An index out of range is an error matching ErrNoRoute.
func (s *Steer[Req, Res]) ReserveFor(ctx context.Context, req Req) (*troupe.Permit[Req, Res], error) {
	i, err := s.choose(req)
	if err != nil {
		return nil, err
	}
	return s.svcs[i].Reserve(ctx)
}

// ReserveAndCall picks the service for req, reserves on it and calls it in
// one step (see troupe.Do), through the service's own one-step path where
// it has one. An index out of range is an error matching ErrNoRoute.
func (s *Steer[Req, Res]) ReserveAndCall(ctx context.Context, req Req) (Res, error) {
	i, err := s.choose(req)
	if err != nil {
		var zero Res
		return zero, err
	}
	return s.do[i](ctx, req)
}

// choose runs the picker, a panic in it becoming the error.
func (s *Steer[Req, Res]) choose(req Req) (i int, err error) {
	defer func() {
		if v := recover(); v != nil {
			i, err = -1, &troupe.PanicError{Where: "steer picker", Value: v, Stack: debug.Stack()}
		}
	}()
	i = s.pick(req, len(s.svcs))
	if i < 0 || i >= len(s.svcs) {
		return -1, &NoRouteError{Index: i, Services: len(s.svcs)}
	}
	return i, nil
}

// route is the Steer seen by the permits it issues (troupe.Reservation).
type route[Req, Res any] Steer[Req, Res]

// Call picks the service and reserves and calls it.
func (r *route[Req, Res]) Call(ctx context.Context, req Req) (Res, error) {
	return (*Steer[Req, Res])(r).ReserveAndCall(ctx, req)
}

// Release does nothing: the permit holds no inner reservation.
func (r *route[Req, Res]) Release() {}

// oneStep returns svc's one-step reserve-and-call, looked up once.
func oneStep[Req, Res any](svc troupe.Service[Req, Res]) func(context.Context, Req) (Res, error) {
	if o, ok := svc.(interface {
		ReserveAndCall(context.Context, Req) (Res, error)
	}); ok {
		return o.ReserveAndCall
	}
	return func(ctx context.Context, req Req) (Res, error) { return troupe.Do(ctx, svc, req) }
}
