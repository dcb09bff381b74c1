package troupe

import "context"

// Attempt says which attempt of a call a context belongs to, as the Retry
// and Hedge stages above the work numbered it: the work, a stage below
// them or a leaf can read it with AttemptFrom (to log it, to send it on as
// a header, to treat a retry or a hedge differently).
//
// A plain value, safe for concurrent use.
type Attempt struct {
	// Retry is 0 for a call's first try and n for its n-th retry, as
	// numbered by the nearest Retry stage above that retried it.
	Retry int
	// Hedge is 0 for the original and n for the n-th hedge, as numbered
	// by the nearest Hedge stage above that hedged it.
	Hedge int
}

// IsRetry reports whether the attempt is a retry.
func (a Attempt) IsRetry() bool { return a.Retry > 0 }

// IsHedge reports whether the attempt is a hedge.
func (a Attempt) IsHedge() bool { return a.Hedge > 0 }

type attemptKey struct{}

// AttemptFrom returns the attempt ctx belongs to: the zero Attempt (a
// first try, the original) when no Retry or Hedge stage numbered it.
func AttemptFrom(ctx context.Context) Attempt {
	a, _ := ctx.Value(attemptKey{}).(Attempt)
	return a
}

// WithAttempt returns a context for attempt a, under ctx: for a stage of
// your own that makes attempts, as Retry and Hedge do. The stages mark
// only retries and hedges, so a first try costs nothing. A context derived
// from it is tied to ctx's end as one derived from ctx itself is: through
// ctx's own AfterFunc method where it has one, with no goroutine of its
// own.
func WithAttempt(ctx context.Context, a Attempt) context.Context {
	return &attemptCtx{Context: ctx, a: a}
}

// attemptCtx is ctx with an Attempt: the context package's WithValue,
// which would hide ctx's AfterFunc method (the runtime's and the stages'
// contexts have one, so that contexts derived from them need no goroutine
// to follow their end). Immutable, safe for concurrent use.
type attemptCtx struct {
	context.Context
	a Attempt
}

func (c *attemptCtx) Value(key any) any {
	if key == (attemptKey{}) {
		return c.a
	}
	return c.Context.Value(key)
}

// AfterFunc arranges for f to run once the context ends, as
// context.AfterFunc does: the context package calls it for a context
// derived from c.
func (c *attemptCtx) AfterFunc(f func()) (stop func() bool) {
	if af, ok := c.Context.(interface{ AfterFunc(func()) func() bool }); ok {
		return af.AfterFunc(f)
	}
	return context.AfterFunc(c.Context, f)
}
