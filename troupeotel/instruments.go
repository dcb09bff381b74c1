package troupeotel

import (
	"context"
	"errors"

	"go.opentelemetry.io/otel/metric"
)

// The metrics' names, as the package doc lists them.
const (
	MetricCalls           = "troupe.calls"
	MetricActiveCalls     = "troupe.active_calls"
	MetricCallDuration    = "troupe.call.duration"
	MetricRejected        = "troupe.rejected"
	MetricAttempts        = "troupe.attempts"
	MetricRetries         = "troupe.retries"
	MetricHedges          = "troupe.hedges"
	MetricTimeouts        = "troupe.timeouts"
	MetricShed            = "troupe.shed"
	MetricFallbacks       = "troupe.fallbacks"
	MetricStateChanges    = "troupe.state.changes"
	MetricLimit           = "troupe.limit"
	MetricRestarts        = "troupe.restarts"
	MetricPicks           = "troupe.balance.picks"
	MetricEndpoints       = "troupe.balance.endpoints"
	MetricEndpointChanges = "troupe.balance.endpoint.changes"
)

// instruments makes ob's instruments with m; it returns every error met.
func (ob *Observer) instruments(m metric.Meter, o options) error {
	var errs []error
	counter := func(name, unit, desc string) metric.Int64Counter {
		c, err := m.Int64Counter(name, metric.WithUnit(unit), metric.WithDescription(desc))
		errs = append(errs, err)
		return c
	}
	ob.calls = counter(MetricCalls, "{call}", "Calls a stage accepted and finished, by outcome.")
	ob.rejected = counter(MetricRejected, "{call}", "Calls a stage answered with an error itself, by reason.")
	ob.attempts = counter(MetricAttempts, "{attempt}", "Downstream calls begun below the innermost observed stage, one per attempt.")
	ob.retries = counter(MetricRetries, "{retry}", "Retries a retry stage sent, by attempt number.")
	ob.hedges = counter(MetricHedges, "{hedge}", "Hedged calls a hedge stage sent, by hedge number.")
	ob.timeouts = counter(MetricTimeouts, "{timeout}", "Deadlines that passed at a timeout stage.")
	ob.shed = counter(MetricShed, "{call}", "Calls a load shedder refused.")
	ob.fallbacks = counter(MetricFallbacks, "{call}", "Failures a fallback stage answered with its fallback.")
	ob.changes = counter(MetricStateChanges, "{change}", "State changes of a stage, by the states before and after.")
	ob.restarts = counter(MetricRestarts, "{restart}", "Restarts of a stage's actor by its supervisor.")
	ob.picks = counter(MetricPicks, "{call}", "Calls a balancer sent to an endpoint, by endpoint.")
	ob.epChanges = counter(MetricEndpointChanges, "{change}", "Endpoints a balancer added, removed and drained, by endpoint and change.")
	var err error
	ob.endpoints, err = m.Int64UpDownCounter(MetricEndpoints, metric.WithUnit("{endpoint}"),
		metric.WithDescription("Endpoints in a balancer's set: added and not yet removed."))
	errs = append(errs, err)
	ob.active, err = m.Int64ObservableUpDownCounter(MetricActiveCalls, metric.WithUnit("{call}"),
		metric.WithDescription("Calls a stage holds: accepted and not yet finished."))
	errs = append(errs, err)
	if err == nil {
		// Read at collection from each stage's own count: two measurements
		// a call fewer on the request path.
		_, err = m.RegisterCallback(ob.observeActive, ob.active)
		errs = append(errs, err)
	}
	ob.duration, err = m.Float64Histogram(MetricCallDuration, metric.WithUnit("s"),
		metric.WithDescription("How long a stage held a call, from accepting it to its outcome."),
		metric.WithExplicitBucketBoundaries(o.boundaries...))
	errs = append(errs, err)
	ob.limit, err = m.Int64Gauge(MetricLimit, metric.WithUnit("{call}"),
		metric.WithDescription("An adaptive stage's concurrency limit, as last changed."))
	errs = append(errs, err)
	return errors.Join(errs...)
}

// observeActive reports each stage's calls in flight, at collection.
func (ob *Observer) observeActive(_ context.Context, o metric.Observer) error {
	ob.sets.m.Range(func(_, v any) bool {
		if s := v.(*stageSets); s.accepts.Load() {
			o.ObserveInt64(ob.active, s.active.Load(), s.baseObs...)
		}
		return true
	})
	return nil
}
