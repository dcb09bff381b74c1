// Package troupe is the contract of troupe's request middleware: a [Service]
// whose readiness is a reservation, the [Permit] that reservation returns,
// the one-shot helper [Do], the [Layer] type and the [Builder] that stacks
// layers (the first layer added is the outermost), and the sentinel errors.
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
// The stages themselves (timeout, retry, rate limit, ...) live in packages
// under stages/, each running as an actor of package actors. This package
// holds no actor code: it depends only on the standard library.
package troupe
