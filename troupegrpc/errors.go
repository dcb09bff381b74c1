package troupegrpc

import (
	"errors"
	"fmt"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// ErrNilService is matched by the error of every call through an
// interceptor made from a nil service (its code is Internal).
var ErrNilService = errors.New("troupegrpc: interceptor: service is nil")

// ErrNilCall is the outcome of a leaf (Invoke or Handle) called with a nil
// call.
var ErrNilCall = errors.New("troupegrpc: nil call")

// ErrNoStream is matched by the error of a stream call whose stack returned
// without opening a stream: its leaf is not Invoke (a mock, say). Its code
// is Internal.
var ErrNoStream = errors.New("troupegrpc: the stack returned without opening a stream")

// ErrNoConn is matched by the error of a call whose leaf has no
// connection to send it on: a call made through Conn, which has none, to
// a stack whose leaf is Invoke, which sends on the interceptor's. End
// such a stack in InvokeOn (each endpoint of a balancer does: see
// Endpoints). Its code is Internal.
var ErrNoConn = errors.New("troupegrpc: the call has no connection to go on: end the stack in InvokeOn")

// ErrBadReply is matched by the error of a unary call whose stack answered
// with a reply the caller's message cannot take: none, or one of another
// type (a leaf other than Invoke). Its code is Internal.
var ErrBadReply = errors.New("troupegrpc: the stack's reply does not fit the caller's message")

// ErrCallEnded is matched by the error of an attempt whose context had
// ended by the time it failed (the caller gave up, or a Timeout outside the
// retry stage expired the call). The error also unwraps to what gRPC
// returned. RetryOn never retries it: every further attempt would carry the
// same ended context.
var ErrCallEnded = errors.New("troupegrpc: the call's context ended")

// ErrCommitted is matched by the outcome of a stream attempt that must not
// be retried: the stream had received its header or its first response
// message (or was committed to one attempt for another reason, see the
// package doc), so the attempt's error is the stream's own, or another
// attempt won and this one was dropped. RetryOn never retries it, and an
// attempt a retry or hedge stage sends anyway opens no stream and fails at
// once with it. The stream's caller never gets it: a committed stream ends
// with its committed attempt's own status.
var ErrCommitted = errors.New("troupegrpc: the stream is committed to one attempt")

// Error is what the interceptors return for an error of the stack that is
// not a gRPC status (a timeout's, a load shedder's, a closed stage's): it
// carries the status code the error maps to (see Code) and unwraps to the
// error, so both status.Code(err) and errors.Is(err, timeout.ErrTimeout)
// work on it.
//
// A plain value, safe for concurrent use.
type Error struct {
	// Code is the status code the error maps to.
	Code codes.Code
	// Err is the stack's error.
	Err error
}

func (e *Error) Error() string {
	return fmt.Sprintf("troupegrpc: %s: %v", e.Code, e.Err)
}

// message is the status message: the stack's error, or the code's name.
func (e *Error) message() string {
	if e.Err == nil {
		return e.Code.String()
	}
	return e.Err.Error()
}

// Unwrap returns the stack's error.
func (e *Error) Unwrap() error { return e.Err }

// GRPCStatus returns the status gRPC sends or reports for the error: its
// code, with the stack's error as the message.
func (e *Error) GRPCStatus() *status.Status { return status.New(e.Code, e.message()) }

// endedError marks the error of an attempt whose context had ended: it
// matches ErrCallEnded and unwraps to gRPC's error.
type endedError struct{ err error }

func (e *endedError) Error() string        { return e.err.Error() }
func (e *endedError) Unwrap() error        { return e.err }
func (e *endedError) Is(target error) bool { return target == ErrCallEnded }

// committedError marks the error of a committed stream, the stream's own:
// it matches ErrCommitted and unwraps to gRPC's error.
type committedError struct{ err error }

func (e *committedError) Error() string        { return e.err.Error() }
func (e *committedError) Unwrap() error        { return e.err }
func (e *committedError) Is(target error) bool { return target == ErrCommitted }

// handlerError marks a server handler's own error, which the server
// interceptors return as it is.
type handlerError struct{ err error }

func (e *handlerError) Error() string { return e.err.Error() }
func (e *handlerError) Unwrap() error { return e.err }
