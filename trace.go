package troupe

import "context"

// AttemptTracer is an optional interface of an [Observer], for tracing
// each attempt of a call: each downstream call below a stack (each retry,
// each hedge) as a span of its own, parented to the caller's trace.
//
// A stage that would report EventStarted to an observer that implements
// AttemptTracer calls StartAttempt instead (and not Observe), with the
// event and the context the downstream call is about to be made with; the
// call is then made with the context StartAttempt returns, which must be
// ctx or a context derived from it. When the downstream call returns,
// EndAttempt is called once, on the same goroutine, with that context and
// the call's error (nil on success).
//
// Both run on the goroutine that makes the downstream call (the caller's,
// or one of the stage's own for detached work such as a hedge), so they
// must be safe for concurrent use and quick. A panic in StartAttempt is
// the attempt's outcome (the downstream call is not made); a panic in
// EndAttempt is logged and joined with the attempt's outcome, as for
// Observe.
type AttemptTracer interface {
	Observer
	StartAttempt(ctx context.Context, ev Event) context.Context
	EndAttempt(ctx context.Context, err error)
}
