package troupehttp

import (
	"context"
	"errors"
	"net/http"
	"slices"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/stages/retry"
)

// RetryOn returns a predicate for retry.Attempts' Retryable that retries:
//
//   - every error but those of a call whose context ended: transport errors,
//     http.Client's own Timeout and a Timeout stage's error from inside the
//     retry stage (timeout.ErrTimeout, each attempt its own deadline) are
//     retried; an error matching ErrCallEnded (the Client leaf's error once
//     the call's context ended: the caller gave up, or a Timeout outside the
//     retry stage expired the session) or context.Canceled is not, since
//     every further attempt would carry the same ended context;
//   - a response whose status is one of codes, only if Held(res): its body
//     is in memory, so dropping it for another attempt leaks nothing, and if
//     no attempt follows (attempts or budget spent) the caller gets it whole
//     and readable. A response that is not held (a body over the Client's
//     HoldLimit, or from a leaf that does not hold bodies) is never retried:
//     it goes to the caller with its connection, unread.
//
// Any other response is not retried: the caller gets it, with a nil error.
// The predicate never reads or closes a body. It is safe for concurrent use.
func RetryOn(codes ...int) func(*http.Response, error) bool {
	codes = slices.Clone(codes)
	return func(res *http.Response, err error) bool {
		if err != nil {
			// NOTE: besides being useless, an attempt after the call's
			// context ended may never run: a Timeout outside the retry
			// stage has already handed its error to the caller, and the
			// runtime queues the attempt for that caller, who is gone
			// (see the ErrCallEnded marking in client.go).
			return !errors.Is(err, ErrCallEnded) && !errors.Is(err, context.Canceled)
		}
		return res != nil && slices.Contains(codes, res.StatusCode) && Held(res)
	}
}

// retryable is RetryOn of the default statuses.
var retryable = RetryOn(defaultRetryStatuses...)

// Retryable is RetryOn(429, 500, 502, 503, 504): errors and held responses
// of those statuses are retried; other 4xx, and every other status, are
// not. It is safe for concurrent use.
func Retryable(res *http.Response, err error) bool { return retryable(res, err) }

// RetryPolicy returns the ready-made retry policy for HTTP: at most max
// retries after the first attempt (none when max <= 0), waiting
// backoff.Delay(n) before the n-th (at once when backoff is nil), or longer
// when the response asks for it with a Retry-After header (up to
// DefaultMaxRetryAfter: a response asking for more is not retried; see
// Policy), of the outcomes Retryable accepts, copying each request with
// CloneRequest (a request whose body cannot be replayed is sent once and
// never retried).
// Use it with retry.New or retry.Layer over a Client leaf, whose default
// HoldStatus holds the bodies of exactly the statuses it retries.
//
// Outcomes: a retried attempt's response is dropped (it is held: nothing
// to close); when no attempt follows, the caller gets the last outcome: a
// response with a nil error (a 503 after max retries, say, body readable),
// or, for an error after max retries, a *retry.ExhaustedError wrapping it.
// Every method is retried, POST included: to retry only idempotent
// requests, set Copy to a function that refuses the others. Never retried,
// as with every retry.Attempts: an error marked with troupe.Permanent, and
// a panic (troupe.ErrPanic; retry.RetryPanics() to retry it).
//
// The returned value is copied by each retry session (see retry.Policy);
// its functions are safe for concurrent use.
func RetryPolicy(max int, backoff retry.Delayer) Policy {
	return Policy{Attempts: retry.Attempts[*http.Request, *http.Response]{
		Max:       max,
		Backoff:   backoff,
		Retryable: Retryable,
		Copy:      CloneRequest,
	}}
}

// Retry returns a retry layer with RetryPolicy(max, backoff) for a stack of
// HTTP requests (stages.Builder.Layer, or troupe.Builder.Layer): the
// policy, with its types, in one call.
func Retry(max int, backoff retry.Delayer, opts ...retry.Option) troupe.Layer[*http.Request, *http.Response] {
	return retry.Layer[*http.Request, *http.Response](RetryPolicy(max, backoff), opts...)
}
