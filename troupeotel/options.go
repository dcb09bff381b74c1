package troupeotel

import "go.opentelemetry.io/otel/trace"

// Option configures an Observer made by New, which applies it once. Safe
// for concurrent use: an Option keeps no state of its own.
type Option func(*options)

// options are New's settings. Read-only once New returns.
type options struct {
	boundaries []float64
	tp         trace.TracerProvider // nil: no spans
	tpSet      bool                 // WithTracerProvider was given (a nil tp is an error)
}

// defaultBoundaries are troupe.call.duration's bucket boundaries, in
// seconds: OpenTelemetry's advice for HTTP request durations.
var defaultBoundaries = []float64{0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10}

// WithDurationBoundaries sets the bucket boundaries of troupe.call.duration,
// in seconds, ascending, as advice to the meter provider (a view configured
// there wins). The default is OpenTelemetry's advice for HTTP durations:
// 0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10.
func WithDurationBoundaries(b ...float64) Option {
	return func(o *options) { o.boundaries = append([]float64(nil), b...) }
}

// WithTracerProvider makes the Observer record spans with a tracer of tp
// named ScopeName: one span per attempt (each downstream call below the
// stack: each retry, each hedge), a child of the span in the caller's
// context, and the policies' events (a retry, a hedge, a timeout, a shed,
// a fallback) as events on the caller's span. The package doc lists them.
// Without it, the Observer records metrics only. A nil tp is New's error.
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(o *options) { o.tp, o.tpSet = tp, true }
}
