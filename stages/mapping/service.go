package mapping

import (
	"context"
	"runtime/debug"

	"github.com/troupe-go/troupe"
)

// service is every combinator: a wrapper that converts the request on the
// way in and the outcome on the way out. The combinators differ only in
// the two conversions (one of them passes its value through).
type service[Req, Res, IReq, IRes any] struct {
	where string
	inner troupe.Service[IReq, IRes]
	do    func(context.Context, IReq) (IRes, error) // inner's one-step call
	in    func(context.Context, Req) (IReq, error)
	// out converts the inner outcome, error or not; it also sees the
	// error of reserving on inner (with a zero IRes).
	out     func(context.Context, IRes, error) (Res, error)
	permits troupe.PermitSource[Req, Res]
}

// newService checks the pieces and returns the wrapper; f is the user's
// function, only checked for nil here (in and out close over it).
func newService[Req, Res, IReq, IRes any](where string, inner troupe.Service[IReq, IRes], fnil bool,
	in func(context.Context, Req) (IReq, error), out func(context.Context, IRes, error) (Res, error),
) (*service[Req, Res, IReq, IRes], error) {
	if inner == nil {
		return nil, &troupe.ConfigError{Stage: where, Option: "inner service", Why: "nil"}
	}
	if fnil {
		return nil, &troupe.ConfigError{Stage: where, Option: "function", Why: "nil"}
	}
	return &service[Req, Res, IReq, IRes]{where: where, inner: inner, do: oneStep(inner), in: in, out: out}, nil
}

// oneStep returns inner's one-step reserve-and-call, looked up once.
func oneStep[Req, Res any](inner troupe.Service[Req, Res]) func(context.Context, Req) (Res, error) {
	if o, ok := inner.(interface {
		ReserveAndCall(context.Context, Req) (Res, error)
	}); ok {
		return o.ReserveAndCall
	}
	return func(ctx context.Context, req Req) (Res, error) { return troupe.Do(ctx, inner, req) }
}

// Reserve reserves on the inner service; the permit returned holds that
// reservation (troupe.Service).
func (s *service[Req, Res, IReq, IRes]) Reserve(ctx context.Context) (*troupe.Permit[Req, Res], error) {
	p, err := s.inner.Reserve(ctx)
	if err != nil {
		var zero IRes
		if _, merr := s.convertOut(ctx, zero, err); merr != nil {
			err = merr // the error as mapped (Err); the others pass it on
		}
		return nil, err
	}
	return s.permits.Issue(&held[Req, Res, IReq, IRes]{s: s, p: p}), nil
}

// ReserveAndCall converts req, reserves on the inner service and calls it
// in one step, then converts the outcome (see troupe.Do).
func (s *service[Req, Res, IReq, IRes]) ReserveAndCall(ctx context.Context, req Req) (Res, error) {
	ireq, err := s.convertIn(ctx, req)
	if err != nil {
		var zero Res
		return zero, err
	}
	ires, err := s.do(ctx, ireq)
	return s.convertOut(ctx, ires, err)
}

// held is the reservation behind a permit the wrapper issued: the inner
// permit.
type held[Req, Res, IReq, IRes any] struct {
	s *service[Req, Res, IReq, IRes]
	p *troupe.Permit[IReq, IRes]
}

// Call converts req, calls with the inner permit and converts the outcome
// (troupe.Reservation). A request that fails to convert releases the inner
// permit unused.
func (h *held[Req, Res, IReq, IRes]) Call(ctx context.Context, req Req) (Res, error) {
	ireq, err := h.s.convertIn(ctx, req)
	if err != nil {
		_ = h.p.Release()
		var zero Res
		return zero, err
	}
	ires, err := h.p.Call(ctx, ireq)
	return h.s.convertOut(ctx, ires, err)
}

// Release releases the inner permit (troupe.Reservation).
func (h *held[Req, Res, IReq, IRes]) Release() { _ = h.p.Release() }

// convertIn runs in, a panic in it becoming the error.
func (s *service[Req, Res, IReq, IRes]) convertIn(ctx context.Context, req Req) (ireq IReq, err error) {
	defer func() {
		if v := recover(); v != nil {
			var zero IReq
			ireq, err = zero, s.panicked(v)
		}
	}()
	return s.in(ctx, req)
}

// convertOut runs out, a panic in it becoming the error.
func (s *service[Req, Res, IReq, IRes]) convertOut(ctx context.Context, ires IRes, ierr error) (res Res, err error) {
	defer func() {
		if v := recover(); v != nil {
			var zero Res
			res, err = zero, s.panicked(v)
		}
	}()
	return s.out(ctx, ires, ierr)
}

func (s *service[Req, Res, IReq, IRes]) panicked(v any) error {
	return &troupe.PanicError{Where: s.where, Value: v, Stack: debug.Stack()}
}
