// Package timeout is tower's Timeout as a troupe stage: each call has a
// deadline, and a call not answered by then returns a timeout error (SPEC
// T1-T5).
//
//   - The deadline starts when the call is made, when the request is sent to
//     the stage, never while reserving (T1): time spent waiting for readiness
//     is not counted; time queued in the stage's own mailbox is.
//   - If the response and the deadline are both ready, the response wins
//     (T2): a call expires only once the deadline has strictly passed, and a
//     response that arrived first is never replaced.
//   - On expiry the call returns *Error, which matches ErrTimeout and wraps
//     context.DeadlineExceeded; the inner work's context is cancelled; the
//     request leaves the stage's deadline set (the timer is freed); a late
//     inner response is discarded (T3).
//   - Placement decides meaning (T4, T5): outside Retry one deadline covers
//     the whole session, backoff waits included; inside Retry each attempt
//     has its own, and the timeout error goes to the retry policy. Outside a
//     Buffer, time queued in the buffer counts; inside, it does not.
//
// The stage uses no timer per request: the requests in flight sit in one
// deadline-ordered set, watched by one reusable timer, and each request's
// context is a small derived context that the stage cancels itself.
//
// A Timeout is safe for concurrent use.
package timeout
