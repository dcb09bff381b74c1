// Package timeout is tower's Timeout as a troupe stage: each call has a
// deadline, and a call not answered by then returns a timeout error.
//
//   - The deadline starts when the call is made, when the request is sent to
//     the stage, never while reserving: time spent waiting for readiness is
//     not counted; time queued in the stage's own mailbox is.
//   - If the response and the deadline are both ready, the response wins: a
//     call expires only once the deadline has strictly passed, and a
//     response that arrived first is never replaced.
//   - On expiry the call returns *Error, which matches ErrTimeout and wraps
//     context.DeadlineExceeded; the inner work's context is cancelled; the
//     request leaves the stage's deadline set (the timer is freed); a late
//     inner response is discarded.
//   - Placement decides meaning: outside Retry one deadline covers the whole
//     session, backoff waits included; inside Retry each attempt has its
//     own, and the timeout error goes to the retry policy. Outside a Buffer,
//     time queued in the buffer counts; inside, it does not.
//
// # Work that ignores its context
//
// A timeout can only cancel the work's context; it cannot stop work that
// never looks at it. By default the downstream call runs on the caller's
// own goroutine, so a caller whose call ignores its context gets the
// timeout error only when that call returns, however late. With the
// Abandon option the caller gets it at the deadline: the call goes on by
// itself on a goroutine of its own, its late result is discarded, and it
// keeps its slot in this stage until it really returns. In both modes the
// call keeps its slot in the concurrency limits outside the timeout until
// it really returns, so calls nobody waits for never exceed those limits.
//
// The stage uses no timer per request: the requests in flight sit in one
// deadline-ordered set, watched by one reusable timer, and each request's
// context is a small derived context that the stage cancels itself.
//
// An observer attached to the stack (troupe.Observer) is told of each
// call that timed out (troupe.EventTimedOut, with the error the call
// gets), on the stage's actor as the deadline passes, or where the
// outcome is produced when the work gave up at the deadline first.
//
// A Timeout is safe for concurrent use.
package timeout
