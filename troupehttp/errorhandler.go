package troupehttp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/internal/advice"
	"github.com/troupe-go/troupe/stages/breaker"
	"github.com/troupe-go/troupe/stages/loadshed"
	"github.com/troupe-go/troupe/stages/ratelimit"
	"github.com/troupe-go/troupe/stages/retry"
	"github.com/troupe-go/troupe/stages/timeout"
)

// DefaultRetryAfter is the Retry-After ErrorHandler sends with a refusal
// that does not say when to come back (a shed request, a half-open
// breaker, a closed stack).
const DefaultRetryAfter = time.Second

// StatusClientClosedRequest is the status ErrorHandler writes when the
// client itself went away (nginx's 499): nobody reads it, but the
// gateway's own logs and metrics tell it from the backend's failures.
const StatusClientClosedRequest = 499

// ErrRateLimited is matched by a *RateLimitedError: a request a rate (a
// quota) refused.
var ErrRateLimited = errors.New("troupehttp: rate limited")

// RateLimitedError is a request refused because a rate or quota is spent:
// ErrorHandler answers it 429 Too Many Requests, with a Retry-After of
// Wait. It matches ErrRateLimited and unwraps to Err. A stage of your own
// (a per-client quota, a Filter) refuses with one (RateLimited makes it).
//
// A plain value, safe for concurrent use.
type RateLimitedError struct {
	// Wait is how long the client should wait before it tries again; 0
	// means DefaultRetryAfter.
	Wait time.Duration
	// Err is why, if anything says more (the quota's own error).
	Err error
}

// RateLimited returns a *RateLimitedError of wait and err.
func RateLimited(wait time.Duration, err error) error { return &RateLimitedError{Wait: wait, Err: err} }

func (e *RateLimitedError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("troupehttp: rate limited, retry after %v", e.Wait)
	}
	return fmt.Sprintf("troupehttp: rate limited, retry after %v: %v", e.Wait, e.Err)
}

// Is reports whether target is ErrRateLimited.
func (e *RateLimitedError) Is(target error) bool { return target == ErrRateLimited }

// Unwrap returns Err.
func (e *RateLimitedError) Unwrap() error { return e.Err }

// HTTPStatus returns 429 (see StatusOf).
func (e *RateLimitedError) HTTPStatus() int { return http.StatusTooManyRequests }

// RetryAfter returns Wait (see StatusOf).
func (e *RateLimitedError) RetryAfter(time.Time) time.Duration { return e.Wait }

// StatusOf returns the status a server should answer when forwarding a
// request failed with err (what ReverseProxy's ErrorHandler is given), and
// how long the client should wait before trying again (0: no
// Retry-After). The first that matches, in this order:
//
//   - an error in err's chain with an HTTPStatus() int method says its own
//     status (a *RateLimitedError: 429), and its RetryAfter(now) method, if
//     it has one, the wait (DefaultRetryAfter when it gives none for a 429
//     or a 503);
//   - a rate limit's refusal (ratelimit.ErrLimited: no unit within its
//     MaxWait, or none before the request's deadline): 429 Too Many
//     Requests, the wait until its next unit (DefaultRetryAfter when it
//     gives none);
//   - retries spent (retry.ErrExhausted, whatever the last attempt's
//     error): 502 Bad Gateway;
//   - a timeout (timeout.ErrTimeout, or a context deadline that passed):
//     504 Gateway Timeout;
//   - an open breaker (breaker.ErrOpen): 503 Service Unavailable, the wait
//     until its open delay ends (DefaultRetryAfter when half-open);
//   - a shed request (loadshed.ErrOverloaded) or a closed stack
//     (troupe.ErrClosed): 503 with DefaultRetryAfter;
//   - a cancelled context (the client went away):
//     StatusClientClosedRequest;
//   - a panic in the stack (troupe.ErrPanic): 500 Internal Server Error;
//   - anything else (a transport error, a permanent error): 502 Bad
//     Gateway, as ReverseProxy's own handler answers.
//
// StatusOf is safe for concurrent use.
func StatusOf(err error) (code int, retryAfter time.Duration) {
	var own interface{ HTTPStatus() int }
	var open *breaker.OpenError
	var limited *ratelimit.LimitedError
	switch {
	case errors.As(err, &own):
		code = own.HTTPStatus()
		if ra, ok := own.(interface{ RetryAfter(time.Time) time.Duration }); ok {
			retryAfter = ra.RetryAfter(time.Now())
		}
		if retryAfter <= 0 && (code == http.StatusTooManyRequests || code == http.StatusServiceUnavailable) {
			retryAfter = DefaultRetryAfter
		}
		return code, max(retryAfter, 0)
	case errors.As(err, &limited):
		if limited.RetryAfter > 0 {
			return http.StatusTooManyRequests, limited.RetryAfter
		}
		return http.StatusTooManyRequests, DefaultRetryAfter
	case errors.Is(err, retry.ErrExhausted):
		return http.StatusBadGateway, 0
	case errors.Is(err, timeout.ErrTimeout), errors.Is(err, context.DeadlineExceeded):
		return http.StatusGatewayTimeout, 0
	case errors.As(err, &open):
		if d := open.RetryAfter(time.Now()); d > 0 {
			return http.StatusServiceUnavailable, d
		}
		return http.StatusServiceUnavailable, DefaultRetryAfter
	case errors.Is(err, loadshed.ErrOverloaded), errors.Is(err, troupe.ErrClosed):
		return http.StatusServiceUnavailable, DefaultRetryAfter
	case errors.Is(err, context.Canceled):
		return StatusClientClosedRequest, 0
	case errors.Is(err, troupe.ErrPanic):
		return http.StatusInternalServerError, 0
	}
	return http.StatusBadGateway, 0
}

// ErrorHandler is an httputil.ReverseProxy ErrorHandler for a proxy over a
// Transport: it answers err with the status StatusOf gives it and, when
// StatusOf gives a wait, a Retry-After header of that many seconds
// (rounded up). A request whose client has gone away (its context ended)
// is answered StatusClientClosedRequest, whatever the error. The body is
// the status's text, as http.Error writes it; nothing is logged (wrap it
// to log: ReverseProxy's own handler logs every error and answers 502).
//
//	proxy.ErrorHandler = troupehttp.ErrorHandler
//
// It is safe for concurrent use.
func ErrorHandler(w http.ResponseWriter, r *http.Request, err error) {
	code, wait := StatusOf(err)
	if r != nil && r.Context().Err() != nil {
		code, wait = StatusClientClosedRequest, 0
	}
	if wait > 0 {
		w.Header().Set("Retry-After", advice.Format(wait, time.Second))
	}
	text := http.StatusText(code)
	if code == StatusClientClosedRequest {
		text = "Client Closed Request"
	}
	http.Error(w, text, code)
}
