package retry

import (
	"errors"
	"math"
	"time"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors/stagekit"
	"github.com/troupe-go/troupe/internal/opt"
)

// Policy decides about retries. Each session works on its own copy of the
// policy value (a Go assignment of the value given to New), made before any
// of its methods runs; the methods have pointer receivers, so what a session
// changes stays in its copy. Put state meant to be shared behind a pointer.
//
// The stage runs both methods under guard: a panic in one ends the session
// with a *troupe.PanicError naming the stage and the method (for example
// "retry: Policy.Retry"), which only that session's caller gets.
//
// Each session works on its own copy, so a Policy need not be safe for concurrent use; what its copies share must be.
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
//
// A plain value, safe for concurrent use.
type Wait struct {
	Delay time.Duration
	Gate  <-chan struct{}
}

// After returns a Wait of d.
func After(d time.Duration) Wait { return Wait{Delay: d} }

// Until returns a Wait that ends when gate delivers or is closed.
func Until(gate <-chan struct{}) Wait { return Wait{Gate: gate} }

// Delayer gives the wait before the n-th retry (n from 0);
// backoff.Exponential is one.
//
// One Delayer serves every session: implementations must be safe for concurrent use.
type Delayer interface {
	Delay(n int) time.Duration
}

// Attempts is the ready-made policy: retry an outcome that Retryable
// accepts, at most Max times per session, waiting Backoff.Delay(n) before
// the n-th retry.
//
// A failed attempt (a non-nil error) that Retryable accepts when no retry
// is left gives the caller an *ExhaustedError (matching ErrExhausted) that
// wraps the attempt's error, for every Max, 0 included (then the first
// failure comes back that way). An accepted response with a nil error is
// returned as is.
//
// Two errors are never retried, whatever Retryable says, and go to the
// caller as they are: one marked with troupe.Permanent (matching
// troupe.ErrPermanent), and a panic (troupe.ErrPanic: a panic in the
// downstream or in a stage below is a bug, not a transient failure)
// unless RetryPanics is set (or the stage's RetryPanics option).
//
// Inside a retry stage, a panic in Retryable, Backoff or Copy ends the
// session with a *troupe.PanicError naming the stage and the function
// ("retry: Attempts.Retryable", "retry: Attempts.Backoff",
// "retry: Attempts.Copy"). New refuses a negative Max (an error matching
// troupe.ErrBadConfig). The same holds for a policy that embeds Attempts.
//
// The value given to New is a prototype: each session works on its own
// copy, so no two goroutines call the methods of one copy at once; the
// functions and the Backoff it holds are shared by every session and must
// be safe for concurrent use.
type Attempts[Req, Res any] struct {
	// Max is the number of retries after the first attempt, 0 or more.
	Max int
	// Backoff gives the waits; nil retries at once.
	Backoff Delayer
	// Retryable says which outcomes to retry; nil retries every error.
	Retryable func(res Res, err error) bool
	// Copy copies a request for a later attempt; nil copies the value.
	// Return false for a request that cannot be sent twice.
	Copy func(Req) (Req, bool)
	// RetryPanics hands a panic's error (troupe.ErrPanic) to Retryable
	// like any other; by default a panic is never retried.
	RetryPanics bool

	retries int32  // this session's retries so far (beside RetryPanics: the policy stays 64 bytes)
	fault   *error // set by the stage for each session (bind): its functions run under guard, and a panic in Copy is left here
}

// Retry implements Policy.
func (a *Attempts[Req, Res]) Retry(_ *Req, res *Res, err *error) (Wait, bool) {
	if e := *err; e != nil && (errors.Is(e, troupe.ErrPermanent) || !a.RetryPanics && errors.Is(e, troupe.ErrPanic)) {
		return Wait{}, false // not curable by a retry: the caller gets it as it is
	}
	retryable, perr := a.retryable(*res, *err)
	if perr != nil {
		return stop(res, err, perr)
	}
	if !retryable {
		return Wait{}, false
	}
	if int(a.retries) >= a.Max {
		if *err != nil {
			*err = &ExhaustedError{Attempts: int(a.retries) + 1, Err: *err}
		}
		return Wait{}, false
	}
	var w Wait
	if a.Backoff != nil {
		if w.Delay, perr = a.delay(); perr != nil {
			return stop(res, err, perr)
		}
	}
	if a.retries < math.MaxInt32 {
		a.retries++ // a Max past it retries for good, which 2^31 retries are
	}
	return w, true
}

// CloneRequest implements Policy.
func (a *Attempts[Req, Res]) CloneRequest(req *Req) (Req, bool) {
	if a.Copy == nil {
		return *req, true
	}
	if a.fault == nil {
		return a.Copy(*req)
	}
	var c Req
	var ok bool
	if err := stagekit.Guard(retryNames.copy, func() { c, ok = a.Copy(*req) }); err != nil {
		*a.fault = err
		var zero Req
		return zero, false
	}
	return c, ok
}

func (a *Attempts[Req, Res]) retryable(res Res, err error) (bool, error) {
	switch {
	case a.Retryable == nil:
		return err != nil, nil
	case a.fault == nil:
		return a.Retryable(res, err), nil
	}
	return stagekit.Guard1(retryNames.retryable, func() (bool, error) { return a.Retryable(res, err), nil })
}

func (a *Attempts[Req, Res]) delay() (time.Duration, error) {
	if a.fault == nil {
		return a.Backoff.Delay(int(a.retries)), nil
	}
	return stagekit.Guard1(retryNames.backoff, func() (time.Duration, error) { return a.Backoff.Delay(int(a.retries)), nil })
}

// stop ends a session with the panic of one of Attempts' functions.
func stop[Res any](res *Res, err *error, perr error) (Wait, bool) {
	var zero Res
	*res, *err = zero, perr
	return Wait{}, false
}

// bind, retryPanics and check make Attempts (and every type that embeds
// it) an attemptsPolicy.
func (a *Attempts[Req, Res]) bind(fault *error) { a.fault = fault }

func (a *Attempts[Req, Res]) retryPanics() { a.RetryPanics = true }

func (a *Attempts[Req, Res]) check() error {
	if a.Max < 0 {
		return opt.Bad("retry", "Attempts.Max", a.Max, "must not be negative")
	}
	return nil
}
