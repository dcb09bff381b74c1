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
//   - every error but those no further attempt can change: transport
//     errors, http.Client's own Timeout and a Timeout stage's error from
//     inside the retry stage (timeout.ErrTimeout, each attempt its own
//     deadline) are retried; not retried are an error matching
//     ErrCallEnded (the leaf's error once the call's context ended: the
//     caller gave up, or a Timeout outside the retry stage expired the
//     session) or context.Canceled, since every further attempt would carry
//     the same ended context; one matching troupe.ErrPermanent (the leaves
//     mark what no retry can cure: a certificate not trusted, a refused
//     redirect, a request no client can send); and one matching
//     troupe.ErrPanic, a bug rather than a failure;
//   - a response whose status is one of codes, only if Held(res): its body
//     is in memory, so dropping it for another attempt leaks nothing, and if
//     no attempt follows (attempts or budget spent) the caller gets it whole
//     and readable. A response that is not held (a body over the leaf's
//     HoldLimit, or from a leaf that does not hold bodies) is never retried:
//     it goes to the caller with its connection, unread.
//
// Any other response is not retried: the caller gets it, with a nil error.
// The predicate sees no request, so it does not judge whether one may be
// sent twice: Policy does (see its Idempotent). It never reads or closes a
// body. It is safe for concurrent use.
func RetryOn(codes ...int) func(*http.Response, error) bool {
	codes = slices.Clone(codes)
	return func(res *http.Response, err error) bool {
		if err != nil {
			// NOTE: besides being useless, an attempt after the call's
			// context ended may never run: a Timeout outside the retry
			// stage has already handed its error to the caller, and the
			// runtime queues the attempt for that caller, who is gone
			// (see the ErrCallEnded marking in client.go).
			return !errors.Is(err, ErrCallEnded) && !errors.Is(err, context.Canceled) &&
				!errors.Is(err, troupe.ErrPermanent) && !errors.Is(err, troupe.ErrPanic)
		}
		return res != nil && slices.Contains(codes, res.StatusCode) && Held(res)
	}
}

// retryable is RetryOn of the default statuses.
var retryable = RetryOn(defaultRetryStatuses...)

// Retryable is RetryOn(429, 500, 502, 503, 504): the errors RetryOn
// retries, and held responses of exactly those five statuses (429 Too Many
// Requests, 500 Internal Server Error, 502 Bad Gateway, 503 Service
// Unavailable, 504 Gateway Timeout); no other status, 4xx or 5xx (501 Not
// Implemented, 505 HTTP Version Not Supported, ...), is retried. It is safe
// for concurrent use.
func Retryable(res *http.Response, err error) bool { return retryable(res, err) }

// RetryPolicy returns the ready-made retry policy for HTTP: at most max
// retries after the first attempt (none when max <= 0), waiting
// backoff.Delay(n) before the n-th (at once when backoff is nil), or longer
// when the response asks for it with a Retry-After header (up to
// DefaultMaxRetryAfter: a response asking for more is not retried; see
// Policy), of the outcomes Retryable accepts, copying each request with
// CloneRequest (a request whose body cannot be replayed is sent once and
// never retried).
//
// Only what is safe is retried (see Policy's Idempotent): a request
// IsIdempotent accepts (GET, HEAD, OPTIONS, TRACE, or one with an
// Idempotency-Key header), after any outcome Retryable accepts; any other
// (a POST, say) only after an error that shows it never left (NotSent: a
// dial error, a shed), never after it may have been written (a reset, a
// timeout, a 503). Set Idempotent to retry more.
//
// Use it with retry.New or retry.Layer over a Send or Client leaf, whose
// default HoldStatus holds the bodies of exactly the statuses it retries.
//
// Outcomes: a retried attempt's response is dropped (it is held: nothing
// to close); when no attempt follows, the caller gets the last outcome: a
// response with a nil error (a 503 after max retries, say, body readable),
// or, for an error after max retries, a *retry.ExhaustedError wrapping it.
// Never retried, as with every retry.Attempts: an error marked with
// troupe.Permanent, and a panic (troupe.ErrPanic; retry.RetryPanics() to
// retry it).
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
// HTTP requests (stages.Builder.Layer): the
// policy, with its types, in one call.
func Retry(max int, backoff retry.Delayer, opts ...retry.Option) troupe.Layer[*http.Request, *http.Response] {
	return retry.Layer[*http.Request, *http.Response](RetryPolicy(max, backoff), opts...)
}
