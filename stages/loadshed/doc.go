// Package loadshed is tower's LoadShed as a troupe stage: when the service
// below it is not ready, a call fails at once with ErrOverloaded instead of
// waiting.
//
// # The readiness path
//
// Reserve never waits. It tries to take a slot in the stage's own
// small mailbox (capacity 1 unless configured): when one is free the permit
// is an ordinary one; when none is, the permit is an "overloaded" permit.
// A context that is already done still returns its error, and once the stage
// is closed Reserve returns the close error: a *troupe.ClosedError, which
// wraps the inner service's readiness error when that is what closed it (the
// stage closes itself when its inner service reports one). Inner
// readiness errors therefore still pass up.
//
// The mailbox is the stage's record of the inner service's readiness. The
// stage actor hands each request on as soon as the inner service grants a
// unit without waiting; when it cannot, it keeps the request (its head of
// line) and waits for the inner service, and the request keeps its slot
// meanwhile. So the slots fill exactly while the inner service is not
// ready, and then every further reservation is shed. With capacity n, at
// most n requests wait for the inner service (one parked, the rest queued);
// the default of 1 lets one request wait for the inner service's readiness,
// as the request that finds it busy, and sheds the rest.
//
// A request in transit through the stage (sent, not yet handed on: about one
// actor hop) and a permit reserved but not yet called also hold a slot. With
// capacity 1, a caller that arrives within that moment is shed even when the
// inner service is ready; raise the capacity (Capacity) to absorb bursts of
// concurrent callers.
//
// # The response path
//
// A call made with an overloaded permit returns ErrOverloaded at once and
// never touches the inner service. A call made with an ordinary permit
// is handed on as usual; the stage does not watch its outcome.
//
// # As the inner service of another stage
//
// A LoadShed inside another stage (a Timeout or a Buffer outside it) is
// always ready to that stage too: its TryReserve and ReserveAsync report
// ready without taking a slot, and its Send takes a slot without waiting or
// answers the request with ErrOverloaded. The outer stage therefore never
// waits for a LoadShed. Once the LoadShed is closed, its TryReserve returns
// the close error, so the outer stage closes too.
//
// # Placement
//
// LoadShed sheds only when something beneath it reports not-ready: put it
// outside the stages that say "not now" (ConcurrencyLimit, RateLimit,
// Buffer). LoadShed over limit(1) with one call in flight lets the next
// request wait in its slot and sheds every call after it at once; limit(1)
// over LoadShed makes the second caller wait at the limit, and nothing is
// ever shed, because the limit never lets a request reach LoadShed while
// the service below is busy. An ErrOverloaded outcome is an ordinary error
// to the stages outside: a Retry outside LoadShed sees it and its policy
// decides.
//
// # Priorities
//
// Requests may carry a priority in their context (WithPriority; Normal
// when they carry none). By default every priority may use every slot. With
// KeepFor, some slots are kept for the higher priorities: as the service
// below falls behind and the slots fill, the lowest priorities find none
// left first and are shed, while higher ones still get in:
//
//	shed, err := loadshed.New(sys, inner,
//		loadshed.Capacity(10),
//		loadshed.KeepFor(loadshed.High, 3),     // High and Critical only
//		loadshed.KeepFor(loadshed.Critical, 2)) // Critical only
//	ctx = loadshed.WithPriority(ctx, loadshed.High)
//
// Low and Normal requests then fill at most 5 slots, High ones 8, Critical
// ones all 10. A request's priority is looked up in its context when it
// takes its slot: the context given to Reserve, or the request's own when a
// stage outside sends it in. Without KeepFor the stage never looks.
//
// An observer attached to the stack (troupe.Observer) is told of each
// call shed (troupe.EventShed, and troupe.EventRejected with
// troupe.ReasonOverloaded), on the goroutine that sent it.
//
// A LoadShed is safe for concurrent use.
package loadshed
