// Package retry is tower's Retry as a troupe stage: a request is sent again
// when a policy says so, after a wait, through the normal readiness path.
//
// A session is one request with all its attempts. It runs the loop
// Called -> Waiting -> Retrying -> Called: after each attempt's outcome the
// policy decides (Called); the session waits as long as the policy said
// (Waiting); then it re-reserves the inner service, like any request
// (Retrying), and sends the next attempt. A readiness error while Retrying
// ends the session with that error, and the policy is not asked: the inner
// service is broken.
//
//   - Policy: Retry sees every attempt's outcome, success included, and may
//     change the request the next attempt sends and the outcome the caller
//     gets; CloneRequest copies the request before each send, and may
//     refuse, in which case the request is sent once and Retry is never
//     asked.
//   - Each session works on its own copy of the policy value, made before any
//     policy method runs: nothing a session changes leaks into another
//     (tower copies the policy after the first CloneRequest, so a counter
//     bumped there leaks into later sessions). Shared state is explicit:
//     behind a pointer.
//   - A panic in the policy's code (its methods, Attempts' Retryable,
//     Backoff and Copy) ends that session only, with a *troupe.PanicError
//     naming the stage and the function; the stage goes on serving.
//   - A panic below the stage (in the downstream, or a stage inside) is a
//     bug, not a transient failure: Attempts (and troupehttp's and
//     troupegrpc's policies, built on it) does not retry troupe.ErrPanic,
//     and the caller gets it as it is, unless told to (RetryPanics, or
//     Attempts.RetryPanics). Nor does it retry an error marked with
//     troupe.Permanent.
//   - Stages inside Retry see every attempt as a new reservation and call;
//     stages outside see one request: a concurrency limit inside frees its
//     permit during the wait, one outside holds it for the session; a
//     timeout inside gives each attempt its own deadline and hands its
//     error to the policy, one outside bounds the whole session, waits
//     included.
//   - Backoff (subpackage backoff) and a retry budget shared by all sessions
//     (subpackage budget, WithBudget) are the helpers users reach for;
//     Attempts is the ready-made policy.
//
// The stage's actor runs the loop without blocking: many sessions are in
// flight at once, each waiting on the stage's one timer (or on a gate
// channel) and on its own context. A session holds one slot of the stage's
// mailbox from its first attempt to its outcome, so sessions in flight are
// bounded by the capacity (by default, by what the stages outside admit). The policy's Retry runs where the
// attempt's outcome is produced (the caller's goroutine, for a downstream
// function), as tower runs it in the response future: it must not block.
//
// An observer attached to the stack (troupe.Observer) is told of each
// retry as it is sent (troupe.EventRetried, with its number: 1 for the
// first), on the stage's actor, and of each attempt's downstream call
// below the stage (troupe.EventStarted).
//
// Each retry's context carries its number: the work reads it with
// troupe.AttemptFrom (Retry: 1 for the first retry; the first try carries
// nothing, and reads 0).
//
// A Retry is safe for concurrent use.
package retry
