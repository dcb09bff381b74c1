// Package steer is tower's Steer: a service that routes each request to
// one of N services, chosen by a function of the request (a [Picker]), as
// a router or a sharded client does. Its readiness is the chosen
// service's.
//
//	st, err := steer.New(func(r Req, n int) int { return int(r.Shard) % n }, shard0, shard1, shard2)
//
// [Layer] makes one for a Builder, with the stack's inner service as
// index 0.
//
// Readiness in troupe is a reservation made before the request is known,
// so the Steer cannot reserve on the chosen service in Reserve. tower's
// Steer waits in poll_ready for every service to be ready, which blocks
// every request behind the slowest service and would here hold a unit of
// each of the N services per permit while one is used. Instead:
//
//   - [Steer.Reserve] returns a permit at once that holds no reservation;
//     its Call runs the picker, then waits for the chosen service's
//     readiness (honouring the call's context) and calls it. A request for
//     a service at its limit waits for that service only; requests for the
//     others go.
//   - troupe.Do (and a stage outside the Steer that reserves and calls in
//     one step) uses [Steer.ReserveAndCall]: the request waits in the
//     chosen service's own line, with no permit made for the Steer.
//   - [Steer.ReserveFor] picks for a request and reserves on the chosen
//     service, for a caller that wants to hold the reservation before it
//     calls: the permit returned is that service's.
//
// A picker that returns an index out of range makes that call fail with a
// [*NoRouteError] (matching [ErrNoRoute]); one that panics, with a
// *troupe.PanicError. Neither calls any service.
//
// The Steer does not own its services: it has no Close, and closing a
// stack built over it leaves them alone. A Steer is safe for concurrent
// use.
package steer
