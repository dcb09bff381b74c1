package mapping

import (
	"context"

	"github.com/troupe-go/troupe"
)

// Request returns a service of requests of type Outer over inner, whose
// requests are of type Inner: f converts each request on the caller's
// goroutine before it is sent to inner, and an error from f is the call's
// outcome (inner is not called; a unit already reserved on it is released
// unused). f may use ctx, the call's context, and must honour it if it
// waits. The outcome is inner's, untouched.
//
// A nil inner or f is an error matching troupe.ErrBadConfig. The service
// returned is safe for concurrent use when f is.
func Request[Outer, Inner, Res any](inner troupe.Service[Inner, Res], f func(ctx context.Context, req Outer) (Inner, error)) (troupe.Service[Outer, Res], error) {
	s, err := newService("mapping.Request", inner, f == nil, f, passOutcome[Res])
	if err != nil {
		return nil, err
	}
	return s, nil
}

// Response returns a service whose responses are of type Out over inner,
// whose responses are of type Res: f converts each successful response on
// the caller's goroutine, and an error from f is the call's outcome.
// Errors from inner pass through unchanged, f is not called for them. f
// must not block.
//
// A nil inner or f is an error matching troupe.ErrBadConfig. The service
// returned is safe for concurrent use when f is.
func Response[Req, Res, Out any](inner troupe.Service[Req, Res], f func(res Res) (Out, error)) (troupe.Service[Req, Out], error) {
	s, err := newService("mapping.Response", inner, f == nil, passRequest[Req],
		func(_ context.Context, res Res, err error) (Out, error) {
			if err != nil {
				var zero Out
				return zero, err
			}
			return f(res)
		})
	if err != nil {
		return nil, err
	}
	return s, nil
}

// Err returns a service over inner whose errors are f's mapping of
// inner's: every error, of reserving on inner or of a call, is replaced by
// f(err). f returning nil keeps the original error (a mapping never turns
// a failure into a success; use Fallback for that). Successful responses
// pass through unchanged, f is not called for them.
//
// A nil inner or f is an error matching troupe.ErrBadConfig. The service
// returned is safe for concurrent use when f is.
func Err[Req, Res any](inner troupe.Service[Req, Res], f func(err error) error) (troupe.Service[Req, Res], error) {
	s, err := newService("mapping.Err", inner, f == nil, passRequest[Req],
		func(_ context.Context, res Res, err error) (Res, error) {
			if err == nil {
				return res, nil
			}
			if mapped := f(err); mapped != nil {
				return res, mapped
			}
			return res, err
		})
	if err != nil {
		return nil, err
	}
	return s, nil
}

// AndThen returns a service over inner that runs f on each successful
// response, on the caller's goroutine with the call's context, and returns
// f's outcome: f may do more work (another call, a decoding that fails),
// may wait, and must honour ctx. Errors from inner pass through unchanged,
// f is not called for them.
//
// A nil inner or f is an error matching troupe.ErrBadConfig. The service
// returned is safe for concurrent use when f is.
func AndThen[Req, Res, Out any](inner troupe.Service[Req, Res], f func(ctx context.Context, res Res) (Out, error)) (troupe.Service[Req, Out], error) {
	s, err := newService("mapping.AndThen", inner, f == nil, passRequest[Req],
		func(ctx context.Context, res Res, err error) (Out, error) {
			if err != nil {
				var zero Out
				return zero, err
			}
			return f(ctx, res)
		})
	if err != nil {
		return nil, err
	}
	return s, nil
}

func passRequest[Req any](_ context.Context, req Req) (Req, error) { return req, nil }

func passOutcome[Res any](_ context.Context, res Res, err error) (Res, error) { return res, err }
