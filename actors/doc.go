// Package actors is troupe's stage-actor runtime on protoactor-go: the actor
// system (quiet by default), the hosts stages are spawned in (children of a
// supervisor actor), the envelope a request travels in, the caller's side of
// a call, the generic stage actor every stage package builds on, and the
// adapter that turns a plain function into the innermost service.
//
// # The request path
//
// A caller reserves a slot in the outermost stage's mailbox (its readiness),
// then calls: the request is put in an [Envelope] that carries the caller's
// context, and posted into the reserved slot. Each stage actor takes the
// envelope, does its work, and hands it on to its inner service with a
// reservation it takes there without blocking; when the inner service is not
// ready, the stage keeps the envelope, pauses its mailbox and is told by a
// control message when a slot is granted.
//
// # Where the downstream call runs
//
// The innermost service is a plain function (see [Func]). The last stage
// does not call it: it hands the pending call back to the caller, whose
// goroutine is waiting anyway, and the caller runs it (as tower's Buffer hands
// the inner future back to the caller). No actor ever blocks on
// downstream work, and the downstream sees as many concurrent calls as there
// are callers the stages let through.
//
// # The response path
//
// Stages that care about the outcome push a [Frame] on the envelope as the
// request goes down. Whoever produces the outcome (the caller that ran the
// function, a stage that rejects the request, a timeout that fires) completes
// the frames from the top down, each exactly once; a frame's [Hook] can
// change the outcome, or take it over (Retry). The last frame hands the
// outcome to the caller. No stage actor sits on the response path unless it
// must act (Retry's wait and re-reservation), so a response costs no hops.
package actors
