// Package limit is tower's ConcurrencyLimit as a troupe stage: at most N
// requests in flight below it.
//
//   - The stage's mailbox has N slots and they are its semaphore: reserving
//     takes one before the inner service is asked anything; with none free,
//     reserving waits, honouring its context.
//   - The slot is held for as long as the response: it comes back when the
//     call's outcome is delivered, or when the call is abandoned, wherever the
//     request is when its caller gives up.
//   - A copy of the stage's handle shares the semaphore but holds no permit:
//     permits are separate values.
//   - With Retry outside the limit, each attempt takes its own permit and the
//     permit is free during the backoff wait; with the limit outside Retry,
//     the whole session holds one permit.
//   - MaxWait(d) bounds the wait for a permit (failsafe-go's bulkhead
//     WithMaxWaitTime): a caller that waited d is refused with an error
//     matching troupe.ErrFull, in a stack too (the stage outside answers
//     its parked request with it and carries on).
//   - SetCapacity changes N while the stack runs: raising it lets those
//     waiting go at once, lowering it takes back no permit already held
//     (new calls wait until fewer than the new N are in flight).
//
// Unlike tower, whose ConcurrencyLimit panics when called without
// readiness, calling without a permit cannot be written here.
//
// A Limit is safe for concurrent use.
package limit
