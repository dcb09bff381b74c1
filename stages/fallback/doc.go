// Package fallback is a troupe stage that answers a failed call another
// way: with a value computed from the request and the error (a cached or
// default response), or by calling an alternative service. It is the
// fallback policy of failsafe-go, resilience4j and Polly, as an actor with a
// bounded mailbox.
//
//   - A call whose outcome is an error that When accepts (by default every
//     error but the caller's own cancellation) gets the fallback's outcome
//     instead; a success, or an error When refuses, passes unchanged.
//     WhenResult decides on the result too: a success it accepts (an empty
//     or stale response) is answered by the fallback as well.
//   - The fallback runs on the caller's goroutine, never on the stage's
//     actor, with the call's context: it may block (read a cache, call
//     another service) and should honour that context.
//   - A fallback that fails answers with an error that matches ErrFailed,
//     wraps the fallback's error and wraps the original error, so
//     errors.Is finds all three. A panic in the fallback or in When is such
//     an error too, wrapping a *troupe.PanicError.
//   - Put it outside the stages whose failures it covers: outside a Retry,
//     it answers once the retries are spent; outside a Timeout, it answers
//     a timed-out call; outside a LoadShed or a rate limit, it answers the
//     calls they refuse.
//
// An observer attached to the stack (troupe.Observer) is told of each
// failure the fallback answers (troupe.EventFallback), where the failure
// was produced.
//
// A Fallback is safe for concurrent use.
package fallback
