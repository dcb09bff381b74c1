package reconnect_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/stages/reconnect"
	"github.com/troupe-go/troupe/troupetest"
)

// spec: HR1
func TestHR1_PanickingStateCallbackIsAnOutcomeAndCloseReturns(t *testing.T) {
	for _, c := range []struct {
		name     string
		panicsAt func(reconnect.State) bool
		shutdown bool
	}{
		{"every change, closed with Pipeline.Close", func(reconnect.State) bool { return true }, false},
		{"every change, closed with System.Shutdown", func(reconnect.State) bool { return true }, true},
		{"Connected only", func(s reconnect.State) bool { return s == reconnect.Connected }, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var logs troupetest.Log
				sys := loggedSystem(t, &logs)
				d := newDialer()
				var calls atomic.Int64
				onChange := func(_, to reconnect.State) {
					calls.Add(1)
					if c.panicsAt(to) {
						panic("observer bug at " + to.String())
					}
				}
				p, rc := pipelineIn(t, sys, d, exact(t, time.Second, time.Minute, 2), 10, reconnect.OnStateChange(onChange))
				ctx := context.Background()
				svc, h := connection()
				d.outcomes <- outcome{svc: svc}

				start := time.Now()
				r := <-troupetest.Go[int, int](ctx, p, 1)
				assert.ErrorIs(t, r.Err, troupe.ErrPanic, "the request whose state change panicked is told")
				var pe *troupe.PanicError
				require.ErrorAs(t, r.Err, &pe)
				assert.Contains(t, pe.Where, "OnStateChange")
				assert.NotEmpty(t, pe.Stack)
				assert.Zero(t, time.Since(start), "at once, not after a restart's backoff")
				synctest.Wait()
				assert.Equal(t, reconnect.Connected, rc.State(), "the connection was made all the same")

				h.Allow(1)
				fut := troupetest.Go[int, int](ctx, p, 2)
				h.Next(ctx).Respond(20)
				assert.Equal(t, troupetest.Result[int]{Value: 20}, <-fut, "the next caller is unaffected")
				assert.Equal(t, reconnect.Counters{Connects: 1}, rc.Counters(), "no failure, no restart")

				cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
				defer cancel()
				start = time.Now()
				if c.shutdown {
					require.NoError(t, sys.Shutdown(cctx))
				} else {
					require.NoError(t, p.Close(cctx))
				}
				assert.Zero(t, time.Since(start), "Close returned at once")
				assert.Equal(t, reconnect.Closed, rc.State())
				assert.Equal(t, int64(3), calls.Load(), "Connecting, Connected, Closed: each told once")
				if c.panicsAt(reconnect.Closed) {
					assert.Contains(t, logs.String(), "observer bug at Closed", "a panic no caller waited for is logged")
				}
			})
		})
	}
}

// panickyConnector is a connector whose Reserve panics at its first call,
// then dials with d.
type panickyConnector struct {
	d     *dialer
	calls atomic.Int64
}

func (c *panickyConnector) Reserve(ctx context.Context) (*troupe.Permit[string, troupe.Service[int, int]], error) {
	if c.calls.Add(1) == 1 {
		panic("connector bug")
	}
	return reconnect.Dialer(c.d.dial).Reserve(ctx)
}

// spec: HR1, RC3
func TestHR1_PanickingConnectorIsAConnectionError(t *testing.T) {
	for _, c := range []struct {
		name      string
		connector func(d *dialer) troupe.Service[string, troupe.Service[int, int]]
	}{
		{"dial function", func(d *dialer) troupe.Service[string, troupe.Service[int, int]] {
			var n atomic.Int64
			return reconnect.Dialer(func(ctx context.Context, target string) (troupe.Service[int, int], error) {
				if n.Add(1) == 1 {
					panic("dialer bug")
				}
				return d.dial(ctx, target)
			})
		}},
		{"connector's Reserve", func(d *dialer) troupe.Service[string, troupe.Service[int, int]] {
			return &panickyConnector{d: d}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				d := newDialer()
				p, rc := connectorPipeline(t, c.connector(d))
				ctx := context.Background()
				r := <-troupetest.Go[int, int](ctx, p, 1)
				assert.ErrorIs(t, r.Err, reconnect.ErrConnect, "the dial that panicked is a failed connection")
				assert.ErrorIs(t, r.Err, troupe.ErrPanic)
				synctest.Wait()
				assert.Equal(t, reconnect.Idle, rc.State())

				svc, h := connection()
				h.Allow(1)
				d.outcomes <- outcome{svc: svc}
				start := time.Now()
				fut := troupetest.Go[int, int](ctx, p, 2)
				h.Next(ctx).Respond(20)
				assert.Equal(t, 20, (<-fut).Value, "the next request connects, after the backoff")
				assert.Equal(t, time.Second, time.Since(start))
				assert.Equal(t, reconnect.Counters{Connects: 1, Failures: 1, Restarts: 1}, rc.Counters())
			})
		})
	}
}

// badClose is a connection whose Close panics.
type badClose struct {
	*troupetest.Mock[int, int]
	closed chan struct{}
}

func (c *badClose) Close(context.Context) error {
	defer close(c.closed)
	panic("close bug")
}

// spec: HR1, RC4
func TestHR1_PanickingConnectionCloseIsLogged(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logs troupetest.Log
		d := newDialer()
		p, rc := pipelineIn(t, loggedSystem(t, &logs), d, exact(t, time.Second, time.Minute, 2), 10)
		ctx := context.Background()
		mock1, h1 := troupetest.NewMock[int, int]()
		closed := make(chan struct{})
		d.outcomes <- outcome{svc: &badClose{Mock: mock1, closed: closed}}
		h1.Allow(1)
		fut := troupetest.Go[int, int](ctx, p, 1)
		h1.Next(ctx).Respond(10)
		require.NoError(t, (<-fut).Err)

		h1.Break(errors.New("GOAWAY")) // discarded, so closed: its Close panics
		mock2, h2 := connection()
		h2.Allow(1)
		d.outcomes <- outcome{svc: mock2}
		fut = troupetest.Go[int, int](ctx, p, 2)
		h2.Next(ctx).Respond(20)
		assert.Equal(t, 20, (<-fut).Value, "the next connection serves")
		<-closed
		synctest.Wait()
		assert.Contains(t, logs.String(), "close bug", "the panic is logged, the process lives on")
		assert.Equal(t, reconnect.Connected, rc.State())
	})
}

// spec: HR1, RC3
func TestHR1_ConnectorReturningNothingIsAConnectionError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := newDialer()
		p, rc := pipeline(t, d, time.Second, 10)
		d.outcomes <- outcome{} // no connection, no error
		r := <-troupetest.Go[int, int](context.Background(), p, 1)
		assert.ErrorIs(t, r.Err, reconnect.ErrConnect)
		assert.ErrorContains(t, r.Err, "no connection")
		synctest.Wait()
		assert.Equal(t, reconnect.Idle, rc.State())
		assert.Equal(t, reconnect.Counters{Failures: 1}, rc.Counters())
	})
}
