package retry

import (
	"errors"
	"fmt"
	"time"
)

// Policy decides about retries. Each session works on its own copy of the
// policy value (a Go assignment of the value given to New), made before any
// of its methods runs; the methods have pointer receivers, so what a session
// changes stays in its copy. Put state meant to be shared behind a pointer.
type Policy[Req, Res any] interface {
	// Retry judges the outcome of an attempt, success included. It may
	// change *req, which the next attempt sends, and *res and *err, which the
	// caller gets if no attempt follows. It reports whether to retry, and
	// how long to wait first. It runs where the outcome was produced (often
	// the caller's goroutine) and must not block.
	Retry(req *Req, res *Res, err *error) (Wait, bool)
	// CloneRequest copies req before each send, for the attempt after it.
	// Returning false refuses (a request that can be read only once): the
	// request is sent, and Retry is not asked about its outcome.
	CloneRequest(req *Req) (Req, bool)
}

// Wait is how long a session waits before its next attempt: Delay, or
// until Gate delivers a value or is closed when Gate is set. Either way the
// wait ends early, with the session, when the request's context ends. The
// zero Wait retries at once.
type Wait struct {
	Delay time.Duration
	Gate  <-chan struct{}
}

// After returns a Wait of d.
func After(d time.Duration) Wait { return Wait{Delay: d} }

// Until returns a Wait that ends when gate delivers or is closed.
func Until(gate <-chan struct{}) Wait { return Wait{Gate: gate} }

// ErrSessionOver ends a session whose request's outcome was delivered, or
// whose caller gave up, while it waited to retry: nobody sees it.
var ErrSessionOver = errors.New("retry: nobody waits for this session any more")

// ErrExhausted is matched by the error Attempts returns when the last
// allowed attempt failed too.
var ErrExhausted = errors.New("retry: attempts exhausted")

// ExhaustedError is the outcome of a session that ran out of attempts. It
// matches ErrExhausted and unwraps to the last attempt's error.
type ExhaustedError struct {
	Attempts int
	Err      error
}

func (e *ExhaustedError) Error() string {
	return fmt.Sprintf("retry: %d attempts failed, the last with: %v", e.Attempts, e.Err)
}

// Is reports whether target is ErrExhausted.
func (e *ExhaustedError) Is(target error) bool { return target == ErrExhausted }

// Unwrap returns the last attempt's error.
func (e *ExhaustedError) Unwrap() error { return e.Err }

// Delayer gives the wait before the n-th retry (n from 0);
// backoff.Exponential is one.
type Delayer interface {
	Delay(n int) time.Duration
}

// Attempts is the ready-made policy: retry an outcome that Retryable
// accepts, at most Max times per session, waiting Backoff.Delay(n) before
// the n-th retry. When the last allowed attempt fails too, the caller gets
// an *ExhaustedError wrapping its error.
type Attempts[Req, Res any] struct {
	// Max is the number of retries after the first attempt.
	Max int
	// Backoff gives the waits; nil retries at once.
	Backoff Delayer
	// Retryable says which outcomes to retry; nil retries every error.
	Retryable func(res Res, err error) bool
	// Copy copies a request for a later attempt; nil copies the value.
	// Return false for a request that cannot be sent twice.
	Copy func(Req) (Req, bool)

	retries int // this session's retries so far
}

// Retry implements Policy.
func (a *Attempts[Req, Res]) Retry(_ *Req, res *Res, err *error) (Wait, bool) {
	retryable := *err != nil
	if a.Retryable != nil {
		retryable = a.Retryable(*res, *err)
	}
	if !retryable {
		return Wait{}, false
	}
	if a.retries >= a.Max {
		if *err != nil && a.Max > 0 {
			*err = &ExhaustedError{Attempts: a.retries + 1, Err: *err}
		}
		return Wait{}, false
	}
	var w Wait
	if a.Backoff != nil {
		w.Delay = a.Backoff.Delay(a.retries)
	}
	a.retries++
	return w, true
}

// CloneRequest implements Policy.
func (a *Attempts[Req, Res]) CloneRequest(req *Req) (Req, bool) {
	if a.Copy != nil {
		return a.Copy(*req)
	}
	return *req, true
}
