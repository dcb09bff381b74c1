// Package breaker is a circuit breaker as a troupe stage: while the service
// inside it fails, or is slow, too often, the breaker refuses calls at once
// instead of adding to the load, then lets a few trial calls through to see
// whether the service has recovered.
//
// # The states
//
//   - Closed: every call goes through, and its outcome enters a sliding
//     window: the last n calls (CountWindow, the default) or the last d
//     of time, counted in buckets (TimeWindow). Once the window holds at
//     least MinCalls outcomes, an outcome that brings the share of failures
//     to FailureRate, or the share of slow calls to the rate given to
//     SlowCalls, opens the breaker.
//   - Open: every call is refused with an *OpenError (matching ErrOpen)
//     that says when the breaker will try again (RetryAt), without reaching
//     the service. When the open delay ends (OpenDelay; with GrowOpenDelay
//     each consecutive opening waits longer, up to a maximum) the breaker
//     goes HalfOpen, at that exact time: a timer of the stage's does it,
//     and a call or a look that comes first does it too.
//   - HalfOpen: the first HalfOpenTrials calls go through as trials; the
//     others are refused with an *OpenError whose State is HalfOpen. Once
//     every trial has its outcome, the breaker closes (with an empty
//     window) if the trials' rates are below the thresholds, and opens
//     again otherwise.
//
// Only the calls let through in the current state count: an outcome that
// arrives after the state changed (a slow call let through before the
// breaker opened) is ignored. A call whose own caller gave up (its context
// ended, and the outcome is that context's error) is not counted at all,
// and a trial of that kind gives its place to the next call. Which other
// outcomes are failures is for Classify to say; by default every error is.
// A call is slow when it takes longer than the duration given to
// SlowCalls, from the moment it is made to its outcome; failed calls can be
// slow too.
//
// # Refusing at once
//
// An open breaker is a service that is not ready, and it says so the way
// LoadShed does: reserving on it never waits (the stage sets no capacity
// of its own), and a call made with the permit returns the *OpenError on
// the goroutine that makes it, without a hop to the stage's actor. A
// permit reserved while the breaker was closed is judged when it is used.
// Stages outside the breaker (a Retry, a Timeout) are refused the same
// way: a Retry outside sees the *OpenError as it sees any error.
//
// # Watching it
//
// State and Snapshot (also Stats' Detail) read the breaker; OnStateChange
// is told of every change, in order, on a goroutine of the breaker's own,
// never on an actor. The call whose outcome made a change gets that
// outcome only after the callback has run, so that a test or a log sees
// the change before the caller does; a panic in the callback, or in the
// classifier, is that call's outcome (an error matching troupe.ErrPanic)
// and never a crash. Times are exact under testing/synctest: the breaker
// opens when the outcome that trips it arrives, and goes HalfOpen at
// RetryAt.
//
// # Compared with resilience4j and gobreaker
//
// The model is resilience4j's CircuitBreaker: count and time windows,
// failure and slow-call rates, minimumNumberOfCalls,
// permittedNumberOfCallsInHalfOpenState (all of them decide) and
// waitDurationInOpenState, with resilience4j's defaults (but slow calls
// count only when SlowCalls asks for them). Where it differs:
// the open delay ends at its exact time without a scheduler thread (the
// stage's one reusable timer does it, and callers check the time too, so
// both agree), where resilience4j waits for the next call unless its
// automatic transition is turned on; an outcome that arrives after the
// state changed is dropped, where resilience4j records an outcome in
// whatever state the breaker is in when it arrives (a call let through
// while closed can count as a half-open trial); and
// the caller's own cancellation is never a failure.
//
// sony/gobreaker trips on counts (ReadyToTrip, by default more than five
// consecutive failures) that are cleared every Interval, lets MaxRequests
// calls through half-open and reopens on the first failure among them, and
// always waits the same Timeout while open. Here a rate over a sliding
// window does not forget everything at an interval's boundary nor trip on
// a short burst below MinCalls; the half-open trials are judged by the
// same rates as the closed window, so one unlucky trial does not reopen a
// mostly recovered service; and the open delay can grow while the service
// stays down, and be jittered (JitterOpenDelay). gobreaker's own semantics
// are options: ConsecutiveFailures(6) is its default ReadyToTrip, TripWhen
// any other, ClearEvery its Interval, ReopenOnTrialFailure its half-open,
// Exclude its IsExcluded, and OnTransition gives the counts with each
// change. Like gobreaker's generations, outcomes from an earlier state do
// not count, and like its two errors, OpenError.State tells a refusal
// while open from one while the trials run.
//
// Operators move it by hand: Open (a downstream known to be down), HalfOpen
// (let the trials decide now) and Reset (closed, its window cleared and its
// consecutive openings forgotten), as failsafe-go's Open, HalfOpen and
// Close; each change is told as any other.
//
// An observer attached to the stack (troupe.Observer) is told of every
// change as OnStateChange is, in the same order and on the same goroutine
// (troupe.EventStateChanged, "closed", "open", "half-open"), and of every
// refusal (troupe.EventRejected with troupe.ReasonOpen).
//
// A Breaker is safe for concurrent use.
package breaker
