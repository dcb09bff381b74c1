// Package buffer is tower's Buffer as a troupe stage: the inner service is
// handed to one worker actor, and callers share only that actor's bounded
// mailbox.
//
//   - Reserving reserves one of the mailbox's slots. When all are taken,
//     reserving waits, honouring its context.
//   - The worker asks the inner service for readiness before it takes the next
//     message: while the inner service is not ready, requests wait in the
//     mailbox, then in callers' reservations. The inner service is used only by
//     the worker, so it needs no copying and no locking.
//   - The response is awaited by the caller, not by the worker: the worker
//     hands the pending call back and moves on; the caller's goroutine runs the
//     downstream function.
//   - When the worker dies (its inner service reports a readiness error, its
//     supervisor stops it after panics, or it is closed), every waiting and
//     every later caller gets a *troupe.ClosedError that matches
//     troupe.ErrClosed and wraps the cause. The calls it handed on before
//     finish with their own outcomes: a broken inner service fails only the
//     requests the buffer still holds.
//
// A Buffer is safe for concurrent use.
package buffer
