package troupegrpc

import (
	"context"
	"errors"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/stages/breaker"
	"github.com/troupe-go/troupe/stages/loadshed"
	"github.com/troupe-go/troupe/stages/ratelimit"
	"github.com/troupe-go/troupe/stages/reconnect"
	"github.com/troupe-go/troupe/stages/timeout"
)

// grpcStatus is what errors carrying a gRPC status implement.
type grpcStatus interface{ GRPCStatus() *status.Status }

// Code returns the status code of err, as the interceptors report it:
//
//   - OK for nil;
//   - the code of the gRPC status err is or wraps (a server's error, through
//     a retry stage's *retry.ExhaustedError, say);
//   - Internal for a panic (troupe.ErrPanic);
//   - DeadlineExceeded for a timeout (timeout.ErrTimeout) or an expired
//     context, Canceled for a cancelled one;
//   - ResourceExhausted for a load shedder's refusal (loadshed.ErrOverloaded);
//   - Unavailable for an open breaker (breaker.ErrOpen), a closed or
//     restarted stage (troupe.ErrClosed, troupe.ErrRestarted), a failed
//     connection (reconnect.ErrConnect) and a remote rate limiter that
//     could not decide (ratelimit.ErrLimiter);
//   - Internal for ErrNilService, ErrNoStream, ErrNoConn and ErrBadReply;
//   - Unknown for anything else (a filter's rejection among them: a
//     predicate that returns a status error chooses its code).
//
// Code is safe for concurrent use.
func Code(err error) codes.Code {
	if err == nil {
		return codes.OK
	}
	var s grpcStatus
	if errors.As(err, &s) {
		if st := s.GRPCStatus(); st != nil {
			return st.Code()
		}
	}
	switch {
	case errors.Is(err, troupe.ErrPanic):
		return codes.Internal
	case errors.Is(err, timeout.ErrTimeout), errors.Is(err, context.DeadlineExceeded):
		return codes.DeadlineExceeded
	case errors.Is(err, context.Canceled):
		return codes.Canceled
	case errors.Is(err, loadshed.ErrOverloaded):
		return codes.ResourceExhausted
	case errors.Is(err, breaker.ErrOpen), errors.Is(err, troupe.ErrClosed),
		errors.Is(err, troupe.ErrRestarted), errors.Is(err, reconnect.ErrConnect),
		errors.Is(err, ratelimit.ErrLimiter):
		return codes.Unavailable
	case errors.Is(err, ErrNilService), errors.Is(err, ErrNoStream), errors.Is(err, ErrNoConn), errors.Is(err, ErrBadReply):
		return codes.Internal
	}
	return codes.Unknown
}

// toStatus returns err as the interceptors return it: nil, err itself when
// it carries a gRPC status, otherwise an *Error with its code.
func toStatus(err error) error {
	if err == nil {
		return nil
	}
	if a, ok := err.(*answeredError); ok {
		return a.err // the server's status, as gRPC gave it
	}
	var s grpcStatus
	if errors.As(err, &s) && s.GRPCStatus() != nil {
		return err
	}
	return &Error{Code: Code(err), Err: err}
}
