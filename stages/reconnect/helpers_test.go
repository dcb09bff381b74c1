package reconnect_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/backoff"
	"github.com/troupe-go/troupe/stages/reconnect"
	"github.com/troupe-go/troupe/supervisor"
	"github.com/troupe-go/troupe/troupetest"
)

// outcome is what one dial returns.
type outcome struct {
	svc troupe.Service[int, int]
	err error
}

// dialer is a scripted connector: each dial takes the next outcome the test
// queued (waiting for one if none is queued), and is recorded.
type dialer struct {
	outcomes chan outcome
	mu       sync.Mutex
	at       []time.Duration // when each dial began, from start; guarded by mu
	ends     []error         // the context's error each dial left with, if it did; guarded by mu
	start    time.Time
}

func newDialer() *dialer { return &dialer{outcomes: make(chan outcome, 64), start: time.Now()} }

func (d *dialer) dial(ctx context.Context, _ string) (troupe.Service[int, int], error) {
	d.mu.Lock()
	d.at = append(d.at, time.Since(d.start))
	d.mu.Unlock()
	select {
	case o := <-d.outcomes:
		return o.svc, o.err
	case <-ctx.Done():
		d.mu.Lock()
		d.ends = append(d.ends, ctx.Err())
		d.mu.Unlock()
		return nil, ctx.Err()
	}
}

// cancelled returns the context errors of the dials that ended on them.
func (d *dialer) cancelled() []error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]error(nil), d.ends...)
}

func (d *dialer) times() []time.Duration {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]time.Duration(nil), d.at...)
}

// connection is a connected service: a mock, which the dialer hands out.
func connection() (troupe.Service[int, int], *troupetest.Handle[int, int]) {
	m, h := troupetest.NewMock[int, int]()
	return m, h
}

// states records state changes.
type states struct {
	mu  sync.Mutex
	seq []reconnect.State
}

func (s *states) record(_, to reconnect.State) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq = append(s.seq, to)
}

func (s *states) get() []reconnect.State {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]reconnect.State(nil), s.seq...)
}

// pipeline builds a supervised pipeline whose only stage is a Reconnect
// over d, with exact (jitter-free) backoff from min, doubling, and the given
// intensity.
func pipeline(t *testing.T, d *dialer, min time.Duration, maxRestarts int, opts ...reconnect.Option) (*supervisor.Pipeline[int, int], *reconnect.Reconnect[int, int]) {
	t.Helper()
	delays, err := backoff.New(min, time.Hour)
	require.NoError(t, err)
	return pipelineIn(t, troupetest.NewSystem(t), d, delays, maxRestarts, opts...)
}

// pipelineIn is pipeline in sys, with the given delays.
func pipelineIn(t *testing.T, sys *actors.System, d *dialer, delays backoff.Exponential, maxRestarts int, opts ...reconnect.Option) (*supervisor.Pipeline[int, int], *reconnect.Reconnect[int, int]) {
	t.Helper()
	return pipelineOver(t, sys, reconnect.Dialer(d.dial), delays, maxRestarts, opts...)
}

// connectorPipeline is pipeline over connector, with delays of 1 s,
// doubling.
func connectorPipeline(t *testing.T, connector troupe.Service[string, troupe.Service[int, int]]) (*supervisor.Pipeline[int, int], *reconnect.Reconnect[int, int]) {
	t.Helper()
	return pipelineOver(t, troupetest.NewSystem(t), connector, exact(t, time.Second, time.Hour, 2), 10)
}

func pipelineOver(t *testing.T, sys *actors.System, connector troupe.Service[string, troupe.Service[int, int]], delays backoff.Exponential, maxRestarts int, opts ...reconnect.Option) (*supervisor.Pipeline[int, int], *reconnect.Reconnect[int, int]) {
	t.Helper()
	var rc *reconnect.Reconnect[int, int]
	p, err := supervisor.New(sys, "downstream", func(h troupe.Host) (troupe.Service[int, int], error) {
		r, err := reconnect.New(h, connector, "peer:443", opts...)
		rc = r
		return r, err
	}, supervisor.WithBackoff(delays, maxRestarts, time.Minute))
	require.NoError(t, err)
	return p, rc
}

// loggedSystem returns a test system that logs to l.
func loggedSystem(t *testing.T, l *troupetest.Log) *actors.System {
	return troupetest.NewSystem(t, actors.WithLogger(l.Logger()))
}

// exact returns jitter-free delays from min, times mult, at most max.
func exact(t *testing.T, min, max time.Duration, mult float64) backoff.Exponential {
	t.Helper()
	delays, err := backoff.New(min, max, backoff.WithMultiplier(mult))
	require.NoError(t, err)
	return delays
}
