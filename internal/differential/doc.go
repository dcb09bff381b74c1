// Package differential holds no code: only a differential test of troupe's
// stages against a reference model of their semantics.
//
// The model (model_*_test.go) is plain, single-threaded Go over a virtual
// clock: each built-in stage is a few lines of straight code (a mailbox of
// slots with a line of waiters, the stage's rule, its continuation on the
// outcome), a caller's goroutine is a queue of the leaf work it runs one at
// a time, and time is an event queue. The test (pgregory.net/rapid, in a
// testing/synctest bubble) draws a random stack of two to five stages and a
// script (callers arriving at given times, some with deadlines; the
// downstream's latency and outcome for each attempt: a value, an error, a
// panic, work that ignores its context), runs the script through the real
// stack and through the model on the same clock, and compares what every
// caller got (its value or its error's class, and when) and the
// downstream's calls (who, which attempt, when, below which endpoint). A
// difference is a bug on one side.
//
// Besides the stages, a stack may hold services that are not stages
// (model_svc_test.go, model_bal_test.go), which a stage outside reaches
// through troupe's Adapt (a permit won by a Reserve on a goroutine of its
// own, the call made with it on the caller's goroutine) and a caller
// through their one-step path:
//
//   - the mapping combinators (package mapping): Request and Response each
//     as a pair that changes the type between them (int to a struct and
//     back, int to string and back), Err and AndThen keeping it. Their
//     readiness is the inner service's; their functions run in the call,
//     on its goroutine: a request that fails to convert releases the
//     inner permit unused, AndThen waits honouring the call's context.
//   - Steer (package steer) over two or three copies of the stack below it
//     (the last may be the downstream itself), routing by a route the
//     script gives each caller, some out of range, some panicking. Its
//     permit holds nothing; its call waits in the chosen service's line.
//   - the balancer (package balance) over two or three endpoints, each a
//     copy of the stack below it, some slow, some failing every call,
//     some removed at a scripted time (their calls in flight finish):
//     its ready cache (a permit reserved on each endpoint in advance,
//     again on the picking goroutine or by the endpoint's watcher), the
//     ready set in the order the balancer keeps it, power of two choices
//     drawn from the same seeded PCG (WithSource), pending requests or
//     peak-EWMA costs computed as package balance does on the same clock,
//     the failure cooldown, the pause of an endpoint that refused a call
//     (until an open breaker's RetryAt, or the backoff's next delay), and
//     the Reserves waiting first come first.
//
// The innermost stage may be a Reconnect (model_reconnect_test.go), whose
// connector dials as the script says (some dials refused, each taking its
// time) and hands over the downstream as the connection, which may break
// after a scripted life: the requests parked while it connects, the
// connection error for the one that waited for a refused dial, the
// supervisor's doubling backoff before the next dial (the failures in a
// row starting over after a connection that was made), a broken
// connection dropped when the stage next asks its readiness, with the
// request that asked waiting for the next one. The dials are compared as
// the downstream's calls are (caller -1, below "dial").
//
// One script in six is a server's: its callers are HTTP requests through
// troupehttp.Handler to a stack of the stages a server's admission stack
// holds (model_http_test.go), over a handler that writes the downstream's
// outcome, and what each caller gets is the response (status, Retry-After
// and body): what the handler wrote, once it wrote, or else Handler's
// answer to the stack's error.
//
// 1,000 sequences a run (CI runs it too); run more with, for instance,
//
//	go test ./internal/differential -differential.n=100000
//
// A failure prints the script, both sides' records, and rapid's replay
// flags (-rapid.seed). The bubble makes the real side deterministic up to
// the order of goroutines that wake at the same instant; the scripts keep
// the times they draw apart, so that no two events the outcome depends on
// fall on one instant.
//
// Where the outcome still depends on that order, the model says so. Two
// kinds of script are left out of the full comparison. Those where work is
// handed to a caller as another goroutine delivers its outcome, or two
// callers begin at one instant with calls into a service, have no single
// right answer and are skipped, counted (world.racy; the test fails above
// one in 20). Those where two goroutines touched, at one instant and
// neither after the other (one woke the other's goroutine before the
// touch, or they were woken apart), a balancer's state in a way whose
// order matters (two picks, a pick and an endpoint becoming ready, a pick
// and the end of a call of one of its pair), or the units of a bounded
// stage that a goroutine's own Reserve reaches (an adapter's, a watcher's),
// are compared on what holds in any order (world.raced,
// record.invariants): every caller got one outcome of a class the model
// knows; no removed endpoint was picked after its removal; no balancer
// has a call in flight once the callers are done; every stack and
// balancer closed, so every removed endpoint drained (these hold of every
// script, and are checked of every one). About one script in 75 is
// compared so.
package differential
