// Package filter is tower's Filter and AsyncFilter as troupe stages: each
// request is checked before it is handed on; a rejected request is answered
// with the check's error and never reaches the inner service.
//
// # Filter
//
// NewFilter takes a synchronous predicate. It runs on the stage's actor when
// the stage takes the request from its mailbox, one request at a time, so it
// must be quick and must not block (no I/O, no locks held for long, no
// channel waits): a slow predicate stalls every request of the stage. Use
// AsyncFilter for a check that waits.
//
//   - The readiness path passes through: reserving takes a slot of the
//     stage's mailbox; the stage hands each accepted request on as soon as
//     the inner service grants a unit, and while the inner service is not
//     ready it waits for it and takes no further work, so callers wait in
//     the mailbox and then in their reservations, as with any stage.
//   - The response path: a rejected request returns a *RejectedError, which
//     matches ErrRejected and unwraps to the predicate's error, so both
//     errors.Is(err, ErrRejected) and errors.Is(err, yourErr) hold; the
//     inner service is never called. An accepted request's outcome is
//     the inner service's, untouched.
//   - The predicate returns the request to pass on, which may differ from
//     the one it was given.
//   - A panic in the predicate answers that request with a
//     *troupe.PanicError; the stage goes on.
//
// # AsyncFilter
//
// NewAsync takes a check that may wait: it gets a context derived from the
// request's own (its values and deadline, ended when the request's context
// ends or when the stage stops) and must honour it.
//
//   - Each check runs on a goroutine of its own, never on the stage's actor.
//     Meanwhile the stage keeps the request, which keeps its slot: the
//     number of checks running at once is bounded by the stage's capacity,
//     and callers beyond it wait in their reservations.
//   - The inner service is called only after the check passes: the
//     check's goroutine posts its result back to the stage, which hands the
//     (possibly rewritten) request on, or answers it with a
//     *RejectedError. When the request's context ended during the check, the
//     request is answered with the context's error instead, whatever the
//     check returned. A panic in the check answers the request with a
//     *troupe.PanicError.
//   - Closing the stage waits for the checks running (they are requests it
//     holds) until Close's context ends; then, or when the stage stops or
//     restarts after a failure, the requests still being checked are
//     answered with the stage's error and their checks' contexts are
//     cancelled, so no check goroutine outlives the stage for longer than
//     its check takes to notice.
//
// An observer attached to the stack (troupe.Observer) is told of each
// rejection (troupe.EventRejected with troupe.ReasonFiltered).
//
// Filter and AsyncFilter are safe for concurrent use.
package filter
