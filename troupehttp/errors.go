package troupehttp

import (
	"errors"
	"fmt"
)

// ErrBodyTooLarge is matched by the error of Replayable and HoldBody when a
// body is longer than the limit they were given. Neither loses the body:
// what they read is put back in front of the rest (see each function).
var ErrBodyTooLarge = errors.New("troupehttp: body too large to buffer")

// ErrNilRequest is the outcome of a call with a nil *http.Request.
var ErrNilRequest = errors.New("troupehttp: nil request")

// ErrNilResponse is what a Transport's RoundTrip returns when its service
// answered with neither a response nor an error, which the
// http.RoundTripper contract does not allow.
var ErrNilResponse = errors.New("troupehttp: service returned a nil response and a nil error")

// ErrNilService is what a Transport made from a nil service returns from
// every RoundTrip.
var ErrNilService = errors.New("troupehttp: Transport: service is nil")

// ErrCallEnded is matched by the Client leaf's error when the call's
// context had ended by the time the request failed (the caller gave up, or
// a Timeout stage above the leaf expired the call). The error also matches
// the context's error and unwraps to what http.Client.Do returned.
// Retryable never retries it: every further attempt of the call would
// carry the same ended context.
var ErrCallEnded = errors.New("troupehttp: the call's context ended")

// endedError is the Client leaf's error for a call whose context had ended:
// it matches ErrCallEnded and unwraps to the error of http.Client.Do.
type endedError struct{ err error }

func (e *endedError) Error() string        { return e.err.Error() }
func (e *endedError) Unwrap() error        { return e.err }
func (e *endedError) Is(target error) bool { return target == ErrCallEnded }

// tooLarge is the ErrBodyTooLarge error for limit.
func tooLarge(what string, limit int64) error {
	return fmt.Errorf("%w: %s longer than %d bytes", ErrBodyTooLarge, what, limit)
}
