package troupeotel

import (
	"context"
	"fmt"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/troupe-go/troupe"
)

// ScopeName is the instrumentation scope of the meter an Observer records
// with.
const ScopeName = "github.com/troupe-go/troupe/troupeotel"

// Observer is a troupe.Observer that records what the stages it is
// attached to tell it as OpenTelemetry metrics, and, made with
// WithTracerProvider, spans (the package doc lists them). Make one with
// New, then attach it to a stack or an actor system.
//
// Observe records synchronously and does not block (unless the meter
// provider's instruments do); after a stage's first events its metrics
// allocate nothing of their own (spans do). Safe for concurrent use.
type Observer struct {
	calls     metric.Int64Counter
	active    metric.Int64ObservableUpDownCounter
	duration  metric.Float64Histogram
	rejected  metric.Int64Counter
	attempts  metric.Int64Counter
	retries   metric.Int64Counter
	hedges    metric.Int64Counter
	timeouts  metric.Int64Counter
	shed      metric.Int64Counter
	fallbacks metric.Int64Counter
	changes   metric.Int64Counter
	limit     metric.Int64Gauge
	restarts  metric.Int64Counter
	picks     metric.Int64Counter
	endpoints metric.Int64UpDownCounter
	epChanges metric.Int64Counter

	tracer trace.Tracer // nil: no spans
	sets   cache
}

var _ troupe.Observer = (*Observer)(nil)

// New returns an Observer recording with a meter of mp named ScopeName; a
// nil mp is the global meter provider (otel.GetMeterProvider). A bad option
// (a nil one, WithTracerProvider(nil)) is an error matching
// troupe.ErrBadConfig, as is mp failing to make an instrument; no Observer
// is returned then.
func New(mp metric.MeterProvider, opts ...Option) (*Observer, error) {
	o := options{boundaries: defaultBoundaries}
	for i, opt := range opts {
		if opt == nil {
			return nil, &troupe.ConfigError{Stage: "troupeotel.New", Option: fmt.Sprintf("option %d of %d", i+1, len(opts)), Why: "nil"}
		}
		opt(&o)
	}
	if o.tpSet && o.tp == nil {
		return nil, &troupe.ConfigError{Stage: "troupeotel.New", Option: "WithTracerProvider", Why: "nil"}
	}
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	ob := &Observer{}
	if err := ob.instruments(mp.Meter(ScopeName), o); err != nil {
		return nil, fmt.Errorf("troupeotel: %w", err)
	}
	if o.tp != nil {
		ob.tracer = o.tp.Tracer(ScopeName)
	}
	return ob, nil
}

// Observe records ev. Events of a type it does not know are ignored.
//
// Measurements are recorded with the event's context when it has one, so
// that a meter provider that keeps exemplars links them to the caller's
// trace.
func (ob *Observer) Observe(ev troupe.Event) {
	ctx := ev.Context
	if ctx == nil {
		ctx = context.Background()
	}
	s := ob.sets.stage(ev.Pipeline, ev.Stage, ev.StageKind)
	switch ev.Type {
	case troupe.EventAccepted:
		s.active.Add(1)
		if !s.accepts.Load() {
			s.accepts.Store(true)
		}
	case troupe.EventFinished:
		s.active.Add(-1)
		out := s.outcome(ev.Outcome)
		ob.calls.Add(ctx, 1, out.add...)
		ob.duration.Record(ctx, ev.Latency.Seconds(), out.rec...)
	case troupe.EventRejected:
		ob.rejected.Add(ctx, 1, s.reason(ev.Reason)...)
	case troupe.EventStarted:
		ob.attempts.Add(ctx, 1, s.base...)
	case troupe.EventRetried:
		ob.retries.Add(ctx, 1, s.attempt(ev.Attempt)...)
	case troupe.EventHedged:
		ob.hedges.Add(ctx, 1, s.attempt(ev.Attempt)...)
	case troupe.EventTimedOut:
		ob.timeouts.Add(ctx, 1, s.base...)
	case troupe.EventShed:
		ob.shed.Add(ctx, 1, s.base...)
	case troupe.EventFallback:
		ob.fallbacks.Add(ctx, 1, s.base...)
	case troupe.EventStateChanged:
		ob.changes.Add(ctx, 1, s.change(ev.From, ev.To)...)
	case troupe.EventLimitChanged:
		ob.limit.Record(ctx, int64(ev.Limit), s.baseRec...)
	case troupe.EventRestarted:
		ob.restarts.Add(ctx, 1, s.base...)
	case troupe.EventPicked:
		ob.picks.Add(ctx, 1, s.endpoint(ev.Endpoint)...)
	case troupe.EventEndpointAdded:
		ob.endpoints.Add(ctx, 1, s.base...)
		ob.epChanges.Add(ctx, 1, s.endpointChange(ev.Endpoint, "added")...)
	case troupe.EventEndpointRemoved:
		ob.endpoints.Add(ctx, -1, s.base...)
		ob.epChanges.Add(ctx, 1, s.endpointChange(ev.Endpoint, "removed")...)
	case troupe.EventEndpointDrained:
		ob.epChanges.Add(ctx, 1, s.endpointChange(ev.Endpoint, "drained")...)
	}
	ob.spanEvent(ev, s)
}
