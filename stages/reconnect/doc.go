// Package reconnect is tower's Reconnect as a troupe stage, driven by a
// supervisor: it holds a connector (a service that makes services) and a
// target, and keeps one connected service to send requests to (SPEC RC1-RC4,
// SUP1).
//
// Its lifecycle is Idle -> Connecting -> Connected (RC1), driven by demand
// (RC2): a request arriving while Idle starts a connection; requests arriving
// while Connecting wait for it (parked in the stage, counted in its
// capacity); once Connected, the connected service's readiness is asked like
// any inner service's.
//
// Connecting is done by a connection actor, a sibling of the stage under the
// same supervisor, which dials on a goroutine of its own (never on an actor)
// with a connect timeout (default 20 s). When a dial fails, or the connected
// service reports a readiness error, the connection actor fails: its
// supervisor restarts it after a backoff (package supervisor: gRPC's
// connection backoff by default), and when it failed too often stops it for
// good. So:
//
//   - A failed connection does not break the stage: reservations are still
//     granted, the request that waited for that connection gets the
//     connection error (a *ConnectError), and the state is Idle again, so the
//     next request tries again, once the backoff allows (RC3).
//   - A connected service that reports a readiness error is discarded (and
//     closed, if it is a troupe.Closer); the state is Idle, and the requests
//     waiting for readiness wait for the next connection (RC4).
//   - When the supervisor gives up, the state is Failed for good: every
//     waiting and later request gets a *troupe.ClosedError wrapping the last
//     connection error (SUP2).
//
// State, Stats and OnStateChange expose the lifecycle for observation (SUP1).
// Calling without readiness cannot be written here (tower's Reconnect
// panics).
//
// A Reconnect is safe for concurrent use.
package reconnect
