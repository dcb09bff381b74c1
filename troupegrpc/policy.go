package troupegrpc

import (
	"errors"
	"slices"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/internal/advice"
	"github.com/troupe-go/troupe/stages/retry"
)

// RetryOn returns a predicate for retry.Attempts' Retryable that retries
// the errors whose code (see Code) is one of codes, except:
//
//   - those of an attempt that must not be sent again: its call's context
//     had ended (ErrCallEnded: the caller gave up, or a Timeout outside the
//     retry stage expired the call), or it belongs to a committed stream
//     (ErrCommitted: a stream that had received its header or a response
//     message);
//   - a panic (troupe.ErrPanic), whatever its code: a bug, not a failure;
//     a Retryable of your own may retry it;
//   - an error marked permanent (troupe.Permanent): no retry can cure it.
//
// A success is never retried. A status that answered a call (any code but
// UNAVAILABLE and RESOURCE_EXHAUSTED: see the package doc) ends every
// attempt of the call; when codes has its code, the predicate retries it
// all the same and lets the call be sent again. The predicate is safe for
// concurrent use.
func RetryOn(cs ...codes.Code) func(Result, error) bool {
	cs = slices.Clone(cs)
	return func(_ Result, err error) bool {
		switch {
		case err == nil || errors.Is(err, ErrCallEnded) || errors.Is(err, ErrCommitted):
			// NOTE: an attempt after the call's context ended may never
			// run: a Timeout outside the retry stage has already answered
			// the caller (see the ErrCallEnded marking in call.go).
			return false
		case errors.Is(err, troupe.ErrPanic) || isPermanent(err) || !slices.Contains(cs, Code(err)):
			return false
		}
		var a *answeredError
		if errors.As(err, &a) {
			a.f.reopen(a)
		}
		return true
	}
}

// retryable is RetryOn of the codes gRPC's own retry design calls safe.
var retryable = RetryOn(codes.Unavailable, codes.ResourceExhausted)

// Retryable is RetryOn(codes.Unavailable, codes.ResourceExhausted): a
// server that is down or overloaded is worth another attempt; any other
// code is the call's answer. It is safe for concurrent use.
func Retryable(res Result, err error) bool { return retryable(res, err) }

// RetryPolicy returns the ready-made retry policy for gRPC calls: at most
// max retries after the first attempt (none when max <= 0), waiting
// backoff.Delay(n) before the n-th (at once when backoff is nil), or
// longer when the server asks for it with a pushback (PushbackKey, up to
// DefaultMaxPushback; see Policy), of the outcomes Retryable accepts.
// Use it with retry.New or retry.Layer (or Retry) over the Invoke leaf.
//
// Outcomes: when no attempt follows, the caller gets the last attempt's
// outcome: a retried error after max retries comes as a
// *retry.ExhaustedError wrapping the server's status (status.Code still
// reads it). Never retried, as with every retry.Attempts: an error marked
// with troupe.Permanent, and a panic (troupe.ErrPanic; retry.RetryPanics()
// to retry it). Every method is retried: to retry only idempotent ones, set
// Retryable to a predicate that looks at the Call's Method too (through
// a policy of your own), or build a stack per method.
//
// The returned value is copied by each retry session (see retry.Policy);
// its functions are safe for concurrent use.
func RetryPolicy(max int, backoff retry.Delayer) Policy {
	return Policy{Attempts: retry.Attempts[*Call, Result]{
		Max:       max,
		Backoff:   backoff,
		Retryable: Retryable,
	}}
}

// Retry returns a retry layer with RetryPolicy(max, backoff) for a stack of
// gRPC calls (stages.Builder.Layer): the policy, with its types, in one
// call.
func Retry(max int, backoff retry.Delayer, opts ...retry.Option) troupe.Layer[*Call, Result] {
	return retry.Layer[*Call, Result](RetryPolicy(max, backoff), opts...)
}

// Policy is the retry policy RetryPolicy returns: retry.Attempts over gRPC
// calls that also honours a server's pushback (ServerPushback of the
// attempt's trailer). The wait before a retry is the longer of the
// backoff's and the pushback's; a pushback that asks for more than
// MaxPushback, or asks not to retry, makes the attempt's error the
// caller's at once. The wait ends early when another attempt of the call
// (a hedge's, beside this retry) answers it with a status no attempt
// should follow: the session then ends with that status.
//
// Each session works on its own copy, so a Policy need not be safe for
// concurrent use; what its copies share must be.
type Policy struct {
	retry.Attempts[*Call, Result]
	// MaxPushback caps the wait a pushback may ask for; zero means
	// DefaultMaxPushback, a negative value ignores pushbacks.
	MaxPushback time.Duration
}

// Retry implements retry.Policy.
func (p *Policy) Retry(req **Call, res *Result, err *error) (retry.Wait, bool) {
	w, again := advice.Retry(&p.Attempts, req, res, err, p.MaxPushback, DefaultMaxPushback, func() (time.Duration, bool) {
		if *err == nil {
			return 0, false // only a failure's trailer is read
		}
		return ServerPushback(res.Trailer)
	})
	if again && w.Delay > 0 && *req != nil {
		// The wait ends early if another attempt of the call (a hedge's)
		// answers it meanwhile: the next attempt then ends at once with
		// that answer.
		w = retry.Until((*req).fl.until(w.Delay))
	}
	return w, again
}
