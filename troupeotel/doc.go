// Package troupeotel records what troupe's stages report to an observer as
// OpenTelemetry metrics and, optionally, spans.
//
//	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
//	obs, err := troupeotel.New(mp, troupeotel.WithTracerProvider(tp))
//	...
//	svc, err := stages.Stack[Req, Res]().
//		Observe(obs, "ocr-api").
//		Limit(20).Timeout(10 * time.Second).Retry(3, bo).
//		Build(sys, api)
//
// It is a module of its own, so that the core module's users never build
// a newer OpenTelemetry than protoactor-go's unless they import it.
//
// # Metrics
//
// Every metric carries the attributes troupe.pipeline.name (the name given
// when the observer was attached), troupe.stage.name (the stage's name in
// its stack: "limit", "timeout-2", or the name given with Named) and
// troupe.stage.kind ("limit", "timeout", "retry", ...); some carry one or
// two more, listed beside them. Each stage is measured on its own: a call
// through a four-stage stack counts once in troupe.calls at each stage, and
// at each stage below a retry stage once per attempt.
//
//	name                             instrument     unit        more attributes                          from
//	troupe.calls                     counter        {call}      troupe.outcome                           EventFinished
//	troupe.call.duration             histogram      s           troupe.outcome                           EventFinished's Latency
//	troupe.active_calls              updowncounter  {call}                                               EventAccepted (+1), EventFinished (-1), read at collection
//	troupe.rejected                  counter        {call}      troupe.reason                            EventRejected
//	troupe.attempts                  counter        {attempt}                                            EventStarted (StartAttempt)
//	troupe.retries                   counter        {retry}     troupe.attempt (1 for the first)         EventRetried
//	troupe.hedges                    counter        {hedge}     troupe.attempt                           EventHedged
//	troupe.timeouts                  counter        {timeout}                                            EventTimedOut
//	troupe.shed                      counter        {call}                                               EventShed
//	troupe.fallbacks                 counter        {call}                                               EventFallback
//	troupe.state.changes             counter        {change}    troupe.state.from, troupe.state.to       EventStateChanged
//	troupe.limit                     gauge          {call}                                               EventLimitChanged
//	troupe.restarts                  counter        {restart}                                            EventRestarted
//	troupe.balance.picks             counter        {call}      troupe.endpoint                          EventPicked
//	troupe.balance.endpoints         updowncounter  {endpoint}                                           EventEndpointAdded (+1), EventEndpointRemoved (-1)
//	troupe.balance.endpoint.changes  counter        {change}    troupe.endpoint, troupe.endpoint.change  EventEndpointAdded, EventEndpointRemoved, EventEndpointDrained
//
// troupe.outcome is "success", "failure", "canceled", "timeout" or "panic"
// (troupe.Outcome); troupe.reason is "other", "closed", "restarted",
// "canceled", "overloaded", "open" or "filtered" (troupe.Reason); the
// states are a breaker's "closed", "open", "half-open", a reconnect's
// "Idle", "Connecting", "Connected", "Failed", "Closed", a rate limit's
// "ready", "limited". A Prometheus exporter writes the names with
// underscores and a unit suffix: troupe_calls_total,
// troupe_call_duration_seconds_bucket, troupe_state_changes_total.
// troupe.attempts counts the downstream calls made below the innermost
// observed stage, so only that stage has it. Queue depths are not events:
// read them from the stack (Stages, Stats) with an observable gauge.
//
// The troupe.balance metrics come from a balancer (package
// stages/balance, its Observe option), whose events name the balancer as
// their stage ("balance") and the endpoint by its key: troupe.endpoint.
// troupe.endpoint.change is "added", "removed" or "drained" (a removed
// endpoint's last call finished). An endpoint's attribute sets are kept
// for the Observer's life, as a stage's are: a balancer whose keys keep
// changing (new addresses at each deploy) adds a few series each.
//
// # Beside resilience4j and Polly
//
// resilience4j (through Micrometer) counts per policy, with the outcome as
// a "kind"; Polly v8 (through .NET's Meter) counts every policy's events in
// one counter, resilience.polly.strategy.events, with the event's name as
// the attribute event.name, and times attempts and whole pipeline runs.
// troupe's metrics are per stage like resilience4j's, and their attributes
// name the pipeline and the stage like Polly's pipeline.name and
// strategy.name. What corresponds:
//
//   - troupe.calls and troupe.call.duration, by troupe.outcome:
//     resilience4j.circuitbreaker.calls (a timer; kind successful, failed)
//     and resilience4j.timelimiter.calls (kind successful, failed,
//     timeout); Polly's resilience.polly.pipeline.duration, measured at the
//     outermost stage.
//   - troupe.calls at the stage below a retry stage, with troupe.retries by
//     troupe.attempt: resilience4j.retry.calls (kind
//     successful_without_retry, successful_with_retry,
//     failed_without_retry, failed_with_retry); Polly's
//     resilience.polly.strategy.attempt.duration (attempt.number) and the
//     event OnRetry.
//   - troupe.rejected with troupe.reason "open":
//     resilience4j.circuitbreaker.not.permitted.calls; Polly's event
//     ExecutionRejected from a circuit breaker.
//   - troupe.rejected with troupe.reason "overloaded", and troupe.shed:
//     Polly's event ExecutionRejected from a rate limiter; resilience4j's
//     bulkhead publishes gauges only.
//   - troupe.active_calls at a limit stage:
//     resilience4j.bulkhead.available.concurrent.calls (its complement).
//   - troupe.limit: resilience4j.bulkhead.max.allowed.concurrent.calls.
//   - troupe.timeouts: resilience4j.timelimiter.calls (kind timeout);
//     Polly's event OnTimeout.
//   - troupe.hedges and troupe.fallbacks: Polly's events OnHedging and
//     OnFallback.
//   - troupe.state.changes: resilience4j.circuitbreaker.state (a gauge of
//     the state); Polly's events OnCircuitOpened, OnCircuitHalfOpened,
//     OnCircuitClosed.
//   - troupe.attempts and troupe.restarts have no counterpart.
//
// OpenTelemetry has no semantic conventions for resilience policies yet;
// the names follow its general rules: lowercase, dotted, durations in
// seconds as histograms, units in braces for counts.
//
// # Spans
//
// Made with WithTracerProvider, the Observer also traces. Each attempt
// (each downstream call below the stack, so each retry and each hedge) is
// a span named troupe.attempt, a child of the span in the caller's
// context, with the attributes troupe.pipeline.name, troupe.stage.name and
// troupe.stage.kind of the innermost stage the call passed; an attempt
// that fails ends with an error status and the error recorded. The
// policies' events become events on the caller's span, in order, with the
// stage's attributes (and troupe.attempt, and exception.message for an
// error):
//
//	span event        when
//	troupe.retry      a retry stage sends attempt troupe.attempt
//	troupe.hedge      a hedge stage sends hedge troupe.attempt
//	troupe.timeout    a timeout stage's deadline passed
//	troupe.shed       a load shedder refused the call
//	troupe.fallback   a fallback answers the failure
//	troupe.pick       a balancer picked the endpoint troupe.endpoint for the call
//
// So a call retried twice shows as the caller's span with three
// troupe.attempt children and two troupe.retry events. Measurements are
// recorded with the caller's context, so a meter provider that keeps
// exemplars links troupe.call.duration to the trace.
package troupeotel
