// Package spawnready is tower's SpawnReady as a troupe stage: when the inner
// service is not ready, waiting for its readiness moves to a goroutine of
// its own, and the reservation watches that work instead of driving it.
//
// # The readiness path
//
// Reserving takes a slot of the stage's mailbox (capacity 1 unless
// configured): it returns at once while the stage has a free slot, whatever
// the inner service's state. The stage actor never calls the inner
// service's Reserve itself: it asks an adapter (stagekit.Adapt), which starts
// one goroutine per wait, calling the inner service's Reserve there. While
// that goroutine waits, the stage keeps the request (and its slot) and takes
// no further work; the reservation of the next caller waits for a slot,
// which comes free when the background wait succeeds and the request is
// handed on. That is tower's SpawnReady, whose poll_ready only watches the
// spawned task's JoinHandle. The caller's goroutine never runs the inner
// service's Reserve, and the stage's actor never blocks on it.
//
// An inner readiness error breaks the stage: every waiting and later
// caller gets a *troupe.ClosedError wrapping it. When the waiting request's
// caller gives up, or the stage closes, the background wait's context is
// cancelled: the inner service's Reserve must honour its context,
// or its goroutine outlives the wait.
//
// # The response path
//
// Unchanged: the call runs on the caller's goroutine with the permit the
// background goroutine won, and its outcome is the inner service's.
//
// # When to use it
//
// Every troupe stage already waits for a plain troupe.Service (one without
// the stagekit.Inner methods) this way. SpawnReady makes that explicit, and
// forces it for any inner service, including stages and services that do
// implement stagekit.Inner. You want it over a custom Service whose Reserve
// blocks and may be slow (a connection pool that dials when empty, a lease
// from a remote quota server): your callers then reserve on SpawnReady
// without blocking on the pool, the dialling happens in the background, one
// wait at a time, and callers line up in SpawnReady's bounded mailbox
// (Capacity) instead of each blocking inside the pool.
//
// A SpawnReady is safe for concurrent use.
package spawnready
