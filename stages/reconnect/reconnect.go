package reconnect

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
)

// State is a Reconnect stage's lifecycle state.
type State int32

const (
	Idle       State = iota // no connection; the next request starts one
	Connecting              // a connection is being made, or waits for its backoff
	Connected               // requests go to the connected service
	Failed                  // the supervisor gave up: terminal
	Closed                  // closed on purpose: terminal
)

func (s State) String() string {
	switch s {
	case Idle:
		return "Idle"
	case Connecting:
		return "Connecting"
	case Connected:
		return "Connected"
	case Failed:
		return "Failed"
	case Closed:
		return "Closed"
	}
	return fmt.Sprintf("State(%d)", int32(s))
}

// ErrConnect is matched by the error a request gets when the connection it
// waited for could not be made; the error is a *ConnectError.
var ErrConnect = errors.New("reconnect: connection failed")

// ConnectError is a failed connection. It matches ErrConnect and unwraps to
// the connector's error.
type ConnectError struct{ Err error }

func (e *ConnectError) Error() string { return "reconnect: connection failed: " + e.Err.Error() }

// Is reports whether target is ErrConnect.
func (e *ConnectError) Is(target error) bool { return target == ErrConnect }

// Unwrap returns the connector's error.
func (e *ConnectError) Unwrap() error { return e.Err }

// Reconnect is a running reconnect stage: a troupe.Service and a
// troupe.Closer.
type Reconnect[Req, Res any] struct {
	*actors.Stage[Req, Res]
	b *behavior[Req, Res]
}

// Stats counts a Reconnect stage's lifecycle events.
type Stats struct {
	Connects int64 // connections made
	Failures int64 // dials that failed, connections whose readiness failed or that panicked
	Restarts int64 // restarts of the connection actor by its supervisor
}

// State returns the current lifecycle state.
func (r *Reconnect[Req, Res]) State() State { return State(r.b.state.Load()) }

// Stats returns the counters.
func (r *Reconnect[Req, Res]) Stats() Stats {
	return Stats{Connects: r.b.connects.Load(), Failures: r.b.failures.Load(), Restarts: r.b.restarts.Load()}
}

// Option configures a Reconnect.
type Option func(*options)

type options struct {
	capacity int
	timeout  time.Duration
	onChange func(from, to State)
}

// Capacity sets the stage's mailbox capacity (default 64).
func Capacity(n int) Option { return func(o *options) { o.capacity = n } }

// ConnectTimeout bounds each dial (default 20 s, gRPC's minimum connect
// timeout).
func ConnectTimeout(d time.Duration) Option { return func(o *options) { o.timeout = d } }

// OnStateChange calls f at every state change, on the stage's actor
// goroutine: f must not block.
func OnStateChange(f func(from, to State)) Option { return func(o *options) { o.onChange = f } }

// Dialer adapts a dial function to a connector.
func Dialer[Target, Req, Res any](dial func(ctx context.Context, target Target) (troupe.Service[Req, Res], error)) troupe.Service[Target, troupe.Service[Req, Res]] {
	return actors.Func(dial, "dialer")
}

// New spawns a reconnect stage in host h (nil means the default system; a
// supervisor.Pipeline paces reconnections with backoff) that connects to
// target with connector.
func New[Target, Req, Res any](h troupe.Host, connector troupe.Service[Target, troupe.Service[Req, Res]], target Target, opts ...Option) (*Reconnect[Req, Res], error) {
	o := options{capacity: 64, timeout: 20 * time.Second}
	for _, opt := range opts {
		opt(&o)
	}
	if connector == nil || o.timeout <= 0 {
		return nil, fmt.Errorf("%w: reconnect needs a connector and a positive connect timeout", actors.ErrBadConfig)
	}
	host, err := actors.HostFrom(h)
	if err != nil {
		return nil, err
	}
	b := &behavior[Req, Res]{onChange: o.onChange, idle: notConnected[Req, Res]{}}
	// The connection actor is spawned first, so that its host closes it
	// last: the stage drains into a live connection.
	c, err := spawnConn(host, connector, target, o.timeout, b)
	if err != nil {
		return nil, err
	}
	b.conn = c
	b.closeConn = func() { c.closeOnce.Do(func() { c.mb.PostUrgent(stopMsg{}) }) }
	st, err := actors.Spawn[Req, Res](host, actors.Config{Name: "reconnect", Capacity: o.capacity}, b.idle, b)
	if err != nil {
		_ = c.Close(context.Background())
		return nil, errors.Join(errors.New("reconnect: spawn"), err)
	}
	b.st = st
	return &Reconnect[Req, Res]{Stage: st, b: b}, nil
}
