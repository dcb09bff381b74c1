// Package troupe is the contract of troupe's request middleware, what a
// stage or a layer is written against. Users build stacks with package
// stages ([github.com/troupe-go/troupe/stages.Stack]) and call them with
// this package's [Do] or a [Permit].
//
// It holds:
//
//   - The service contract: [Service], whose readiness is a reservation,
//     the [Permit] that reservation returns (issued by a [PermitSource]
//     over a [Reservation]), [Do] (reserve and call in one line),
//     [Closer], and [LeakedPermits] with [DroppedReporter] for permits
//     dropped unused.
//   - Layers: [Layer] and [LayerFunc], [Named], the [Host] a layer spawns
//     its stage in and the [StageHost] a stack hands each layer, and a
//     built [Stack] with its stages' [StageInfo] and [Stats].
//   - Errors: [ErrBadConfig], [ErrClosed] ([ClosedError]), [ErrRestarted]
//     ([RestartError]), [ErrPanic] ([PanicError]), [ErrPermitUsed], and the
//     [AbandonedError] of a Close whose context ended first.
//   - Observing: [Observer] and [ObserverFunc] receive each [Event] (its
//     [EventType], [Outcome] from [Classify], [Reason]); an
//     [AttemptTracer] traces each downstream attempt.
//   - [Builder] and [NewBuilder]: the untyped machinery that stacks layers,
//     which stages.Builder is made of. It is for authors of layers and of
//     stack builders of their own; a user's stack is built with
//     stages.Stack, whose Layer method takes any Layer.
//
// A call is only possible through a Permit: Service has no call method, so
// calling without readiness cannot be written. A Permit is used
// at most once; a second Call, or a Call after Release, returns
// [ErrPermitUsed]. A Permit dropped without Call or Release is
// reclaimed by the garbage collector and its capacity given back (see
// [PermitSource]).
//
// An error no retry can cure is marked with [Permanent] (it matches
// [ErrPermanent] and still everything it wraps): every retry and hedge
// policy troupe ships ends the call with it at once. A panic ([ErrPanic])
// is a bug, not a transient failure: those policies do not retry it
// either, unless told to (package retry's RetryPanics).
//
// The work of an attempt can tell which it is: [AttemptFrom] reads the
// retry's and the hedge's number from its context, as the Retry and Hedge
// stages set them ([WithAttempt], for stages of your own).
//
// The stages themselves (timeout, retry, rate limit, ...) live in packages
// under stages/, each running as an actor of package actors. This package
// holds no actor code: it depends only on the standard library.
package troupe
