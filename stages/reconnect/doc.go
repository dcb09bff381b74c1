// Package reconnect is tower's Reconnect as a troupe stage, driven by a
// supervisor: it holds a connector (a service that makes services) and a
// target, and keeps one connected service to send requests to.
//
// Its lifecycle is Idle -> Connecting -> Connected, driven by demand: a
// request arriving while Idle starts a connection; requests arriving while
// Connecting wait for it (parked in the stage, counted in its capacity);
// once Connected, the connected service's readiness is asked like any inner
// service's.
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
//     connection error (matching ErrConnect), and the state is Idle again, so the
//     next request tries again, once the backoff allows.
//   - A connected service that reports a readiness error is discarded (and
//     closed, if it is a troupe.Closer); the state is Idle, and the requests
//     waiting for readiness wait for the next connection.
//   - When the supervisor gives up, the state is Failed for good: every
//     waiting and later request gets a *troupe.ClosedError wrapping the last
//     connection error.
//
// The backoff grows with each failure in a row and starts over after a
// healthy connection, as gRPC's does: by default a connection is healthy as
// soon as it is made; HealthyAfter asks for a minimum time up. The
// supervisor's restart intensity counts every failure all the same, so a
// peer that keeps accepting connections and dropping them is given up on.
//
// Closing (Close, or closing the pipeline or system it runs in) makes no
// more connections: a dial in progress is cancelled through its context,
// and the requests waiting for a connection, or for the backoff before one,
// get a *troupe.ClosedError at once; requests with a live connection drain
// through it.
//
// User code runs under stagekit.Guard: a panic in the connector is a failed
// dial (an error matching ErrConnect and troupe.ErrPanic); a panic in OnStateChange
// is a *troupe.PanicError for the request the change was made for, or is
// logged when no request waits; a panic in a discarded connection's Close
// is logged. None of them crashes the process or keeps the stage from
// closing.
//
// State, Stats and OnStateChange expose the lifecycle for observation.
// Calling without readiness cannot be written here (tower's Reconnect
// panics).
//
// An observer attached to the system (troupe.Observer) is told of every
// change of state, on the stage's actor, with the states' String names
// (troupe.EventStateChanged), and of each restart of the connection actor
// (troupe.EventRestarted, with the failure before it).
//
// A Reconnect is safe for concurrent use.
package reconnect
