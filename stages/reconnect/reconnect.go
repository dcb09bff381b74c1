package reconnect

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/actors/stagekit"
	"github.com/troupe-go/troupe/internal/opt"
)

// State is a Reconnect stage's lifecycle state.
//
// A plain value, safe for concurrent use.
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
// waited for could not be made; that error wraps the connector's too.
var ErrConnect = errors.New("reconnect: connection failed")

// errNilConnection is the error of a dial that returned neither a
// connection nor an error.
var errNilConnection = errors.New("reconnect: the connector returned no connection and no error")

// Reconnect is a running reconnect stage: a troupe.Service and a
// troupe.Closer. It is safe for concurrent use.
type Reconnect[Req, Res any] struct {
	stagekit.Handle[Req, Res]
	st *stagekit.Stage[Req, Res]
	b  *behavior[Req, Res]
	c  interface{ Close(context.Context) error }
}

// Counters counts a Reconnect stage's lifecycle events (its Stats' Detail).
//
// A plain value, safe for concurrent use.
type Counters struct {
	Connects int64 // connections made
	Failures int64 // dials that failed, connections whose readiness failed or that panicked
	Restarts int64 // restarts of the connection actor by its supervisor
}

// State returns the current lifecycle state.
func (r *Reconnect[Req, Res]) State() State { return State(r.b.state.Load()) }

// Counters returns the counters.
func (r *Reconnect[Req, Res]) Counters() Counters { return r.b.counters() }

func (b *behavior[Req, Res]) counters() Counters {
	return Counters{Connects: b.connects.Load(), Failures: b.failures.Load(), Restarts: b.restarts.Load()}
}

// Detail is the stage's Stats' Detail: its Counters (stagekit.Detailer).
func (b *behavior[Req, Res]) Detail() any { return b.counters() }

// Close closes the stage. No connection is made from then on: a dial in
// progress is cancelled (its context ends) and every request waiting for a
// connection, or for the backoff before one, gets a *troupe.ClosedError at
// once. Requests that have a live connection drain through it, as
// the stages' Close says: Close returns nil when they all did, ctx's error
// when ctx ended first (those left get a *troupe.ClosedError). Closing the
// host it runs in (supervisor.Pipeline.Close, actors.System.Shutdown) does
// the same when it comes to the Reconnect, after the stages spawned after
// it (the stages outside it) are closed: a host closes the most recent
// first.
func (r *Reconnect[Req, Res]) Close(ctx context.Context) error {
	_ = r.c.Close(ctx) // prompt: it waits for no user code
	return r.st.Close(ctx)
}

// Option configures a Reconnect.
//
// Options are plain values, safe for concurrent use.
type Option func(*options)

type options struct {
	capacity     int
	timeout      time.Duration
	healthyAfter time.Duration
	onChange     func(from, to State)
	onChangeSet  bool
}

// Capacity sets the stage's mailbox capacity (default 64).
func Capacity(n int) Option { return func(o *options) { o.capacity = n } }

// ConnectTimeout bounds each dial (default 20 s, gRPC's minimum connect
// timeout).
func ConnectTimeout(d time.Duration) Option { return func(o *options) { o.timeout = d } }

// HealthyAfter sets how long a connection must stay up to count as
// healthy, which starts the backoff over (default 0: as soon as it is
// made, as gRPC's backoff starts over once a connection is READY).
//
// The supervisor's backoff grows with each failure in a row (a failed dial,
// a connection that broke before it was healthy) and starts over after a
// healthy connection: the next dial waits the shortest delay. Its restart
// intensity still counts every failure, so a peer that accepts connections
// and drops them at once is given up on after K failures within W (see
// package supervisor); with HealthyAfter(d), such connections do not reset
// the backoff, and the delays grow as for a peer that is down.
func HealthyAfter(d time.Duration) Option { return func(o *options) { o.healthyAfter = d } }

// OnStateChange calls f at every state change, on the stage's actor
// goroutine: f must not block. A panic in f is a *troupe.PanicError for the
// request the change was made for (the request that started a connection,
// or the first one waiting for it); the change itself stands. A panic at a
// change no request waits for (Closed, Failed, a restart) is logged through
// the system's logger. A nil f is New's error.
func OnStateChange(f func(from, to State)) Option {
	return func(o *options) { o.onChange, o.onChangeSet = f, true }
}

// Dialer adapts a dial function to a connector.
func Dialer[Target, Req, Res any](dial func(ctx context.Context, target Target) (troupe.Service[Req, Res], error)) troupe.Service[Target, troupe.Service[Req, Res]] {
	return actors.Func(dial, "dialer")
}

// New spawns a reconnect stage in host h (nil is an error; a
// supervisor.Pipeline paces reconnections with backoff) that connects to
// target with connector. A bad configuration (no connector, a Dialer of a
// nil function, a connect timeout that is not positive, a negative
// HealthyAfter) is an error matching troupe.ErrBadConfig.
func New[Target, Req, Res any](h troupe.Host, connector troupe.Service[Target, troupe.Service[Req, Res]], target Target, opts ...Option) (*Reconnect[Req, Res], error) {
	o := options{capacity: 64, timeout: 20 * time.Second}
	if err := opt.Apply("reconnect", &o, opts); err != nil {
		return nil, err
	}
	if o.onChangeSet && o.onChange == nil {
		return nil, opt.Nil("reconnect", "OnStateChange's function")
	}
	switch {
	case connector == nil:
		return nil, opt.Nil("reconnect", "connector")
	case o.timeout <= 0:
		return nil, opt.Bad("reconnect", "ConnectTimeout", o.timeout, "must be positive")
	case o.healthyAfter < 0:
		return nil, opt.Bad("reconnect", "HealthyAfter", o.healthyAfter, "must not be negative")
	}
	if v, ok := connector.(interface{ Validate() error }); ok { // Dialer(nil)
		if err := v.Validate(); err != nil {
			return nil, fmt.Errorf("reconnect: connector: %w", err)
		}
	}
	host, err := stagekit.HostFrom(h)
	if err != nil {
		return nil, err
	}
	b := &behavior[Req, Res]{onChange: o.onChange, idle: notConnected[Req, Res]{}, log: host.System().Logger()}
	c, err := newConn(host, connector, target, o, b)
	if err != nil {
		return nil, fmt.Errorf("reconnect: %w", err)
	}
	b.conn = c
	st, err := stagekit.Spawn[Req, Res](h, stagekit.Config{Name: "reconnect", Capacity: o.capacity}, b.idle, b)
	if err != nil {
		return nil, fmt.Errorf("reconnect: spawn: %w", err)
	}
	b.st = st
	// NOTE: the connection actor is spawned after the stage, so that its host
	// closes it first (a host closes the most recent first): the dial is
	// cancelled and the requests waiting for a connection are answered
	// before the stage drains, as Close does.
	if err := c.spawn(); err != nil {
		_ = st.Close(context.Background())
		return nil, fmt.Errorf("reconnect: spawn: %w", err)
	}
	r := &Reconnect[Req, Res]{st: st, b: b, c: c}
	r.Handle = stagekit.NewHandle(st, nil)
	return r, nil
}
