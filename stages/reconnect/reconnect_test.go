package reconnect_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/stages/reconnect"
	"github.com/troupe-go/troupe/supervisor"
	"github.com/troupe-go/troupe/troupetest"
)

// spec: RC1, RC2, SUP1
func TestRC1_RC2_DemandDrivesIdleConnectingConnected(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := newDialer()
		var seen states
		p, rc := pipeline(t, d, time.Second, 10, reconnect.OnStateChange(seen.record))
		ctx := context.Background()
		synctest.Wait()
		assert.Equal(t, reconnect.Idle, rc.State())
		assert.Empty(t, d.times(), "no demand, no dial")

		fut := troupetest.Go[int, int](ctx, p, 1)
		synctest.Wait()
		assert.Equal(t, reconnect.Connecting, rc.State(), "the request started a connection and waits for it")
		assert.Equal(t, 1, rc.Stats().Used)

		svc, h := connection()
		h.Allow(1)
		d.outcomes <- outcome{svc: svc}
		req := h.Next(ctx)
		assert.Equal(t, reconnect.Connected, rc.State())
		req.Respond(10)
		assert.Equal(t, troupetest.Result[int]{Value: 10}, <-fut)

		h.Allow(1) // connected: the connection's readiness is asked
		fut = troupetest.Go[int, int](ctx, p, 2)
		h.Next(ctx).Respond(20)
		assert.Equal(t, 20, (<-fut).Value)
		assert.Len(t, d.times(), 1, "one connection for both")
		assert.Equal(t, []reconnect.State{reconnect.Connecting, reconnect.Connected}, seen.get())
		assert.Equal(t, reconnect.Counters{Connects: 1}, rc.Counters())
	})
}

// spec: RC3, SUP1
func TestRC3_FailedConnectionAnswersTheNextCallAndGoesIdle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := newDialer()
		var seen states
		p, rc := pipeline(t, d, time.Second, 10, reconnect.OnStateChange(seen.record))
		ctx := context.Background()
		refused := errors.New("connection refused")
		d.outcomes <- outcome{err: refused}

		r := <-troupetest.Go[int, int](ctx, p, 1)
		assert.ErrorIs(t, r.Err, reconnect.ErrConnect, "the call that waited gets the connection error")
		assert.ErrorIs(t, r.Err, refused)
		synctest.Wait()
		assert.Equal(t, reconnect.Idle, rc.State(), "and the state is Idle again")

		perm, err := p.Reserve(ctx) // a failed connection did not break the stage
		require.NoError(t, err)
		start := time.Now()
		svc, h := connection()
		h.Allow(1)
		d.outcomes <- outcome{svc: svc}
		fut := troupetest.GoWith(ctx, perm, 2)
		h.Next(ctx).Respond(20)
		assert.Equal(t, 20, (<-fut).Value)
		assert.Equal(t, time.Second, time.Since(start), "the next try came after the supervisor's backoff")
		assert.Equal(t, []time.Duration{0, time.Second}, d.times())
		assert.Equal(t, reconnect.Counters{Connects: 1, Failures: 1, Restarts: 1}, rc.Counters())
		assert.Equal(t, []reconnect.State{reconnect.Connecting, reconnect.Idle, reconnect.Connecting, reconnect.Connected}, seen.get())
		assert.Equal(t, supervisor.Stats{Restarts: 1}, p.Stats())
	})
}

// closable is a connection that records being closed. It keeps the mock's
// Inner side, so the stage asks its readiness directly.
type closable struct {
	*troupetest.Mock[int, int]
	closed chan struct{}
}

func (c *closable) Close(context.Context) error { close(c.closed); return nil }

// plainClosable hides the Inner side: the stage waits for its readiness on
// a goroutine of its own (actors.Adapt), and hears of the error from there.
type plainClosable struct {
	troupe.Service[int, int]
	closed chan struct{}
}

func (c *plainClosable) Close(context.Context) error { close(c.closed); return nil }

// spec: RC4
func TestRC4_BrokenConnectionIsDiscardedAndReplaced(t *testing.T) {
	for _, plain := range []bool{false, true} {
		t.Run(map[bool]string{false: "readiness asked directly", true: "readiness awaited in the background"}[plain], func(t *testing.T) {
			brokenConnection(t, plain)
		})
	}
}

func brokenConnection(t *testing.T, plain bool) {
	synctest.Test(t, func(t *testing.T) {
		d := newDialer()
		p, rc := pipeline(t, d, 500*time.Millisecond, 10)
		ctx := context.Background()
		mock1, h1 := troupetest.NewMock[int, int]()
		closed := make(chan struct{})
		var first troupe.Service[int, int] = &closable{Mock: mock1, closed: closed}
		if plain {
			first = &plainClosable{Service: mock1, closed: closed}
		}
		d.outcomes <- outcome{svc: first}
		h1.Allow(1)
		fut := troupetest.Go[int, int](ctx, p, 1)
		h1.Next(ctx).Respond(10)
		require.NoError(t, (<-fut).Err)

		h1.Break(errors.New("GOAWAY"))
		mock2, h2 := connection()
		h2.Allow(1)
		d.outcomes <- outcome{svc: mock2}
		start := time.Now()
		fut = troupetest.Go[int, int](ctx, p, 2) // meets the broken connection
		req := h2.Next(ctx)
		assert.Equal(t, 2, req.Value, "the request waited for the next connection, it did not fail")
		req.Respond(20)
		assert.Equal(t, 20, (<-fut).Value)
		assert.Equal(t, 500*time.Millisecond, time.Since(start), "reconnected after the backoff")
		<-closed // the discarded connection was closed
		assert.Equal(t, reconnect.Connected, rc.State())
		assert.Equal(t, reconnect.Counters{Connects: 2, Failures: 1, Restarts: 1}, rc.Counters())
		assert.Zero(t, h1.Calls()-1, "nothing more was sent to the broken connection")
	})
}

// spec: SUP2, SUP1
func TestSUP2_TooManyFailuresStopRetryingForGood(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := newDialer()
		var seen states
		p, rc := pipeline(t, d, 100*time.Millisecond, 2, reconnect.OnStateChange(seen.record))
		ctx := context.Background()
		down := errors.New("host unreachable")
		for range 3 {
			d.outcomes <- outcome{err: down}
		}
		var futs []<-chan troupetest.Result[int]
		for i := range 5 {
			futs = append(futs, troupetest.Go[int, int](ctx, p, i))
			synctest.Wait()
		}
		<-p.Failed()
		for i, f := range futs {
			r := <-f
			if i < 3 {
				assert.ErrorIs(t, r.Err, reconnect.ErrConnect, "request %d waited for dial %d", i, i)
			} else {
				assert.ErrorIs(t, r.Err, troupe.ErrClosed, "request %d: the pipeline stopped retrying", i)
			}
			assert.ErrorIs(t, r.Err, down)
		}
		assert.Equal(t, []time.Duration{0, 100 * time.Millisecond, 300 * time.Millisecond}, d.times(), "backoff 100 ms, then 200 ms; the third failure is one too many")
		assert.ErrorIs(t, p.Err(), supervisor.ErrFailed)
		assert.ErrorIs(t, p.Err(), down)
		assert.Equal(t, reconnect.Failed, rc.State())
		assert.Equal(t, reconnect.Failed, seen.get()[len(seen.get())-1])
		_, err := p.Reserve(ctx)
		assert.ErrorIs(t, err, troupe.ErrClosed)
		assert.Equal(t, supervisor.Stats{Restarts: 2, Stops: 1}, p.Stats())
	})
}

// spec: RC3
func TestRC3_DialTimeoutIsAConnectionError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := newDialer() // no outcome queued: the dial hangs until its timeout
		p, _ := pipeline(t, d, time.Second, 10, reconnect.ConnectTimeout(3*time.Second))
		start := time.Now()
		r := <-troupetest.Go[int, int](context.Background(), p, 1)
		assert.ErrorIs(t, r.Err, reconnect.ErrConnect)
		assert.ErrorIs(t, r.Err, context.DeadlineExceeded)
		assert.Equal(t, 3*time.Second, time.Since(start))
	})
}

// spec: SUP3
func TestSUP3_PanicInTheConnectionRestartsTheStageAndReconnects(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := newDialer()
		p, rc := pipeline(t, d, time.Second, 10)
		ctx := context.Background()
		mock1, h1 := connection()
		d.outcomes <- outcome{svc: mock1}
		h1.Allow(1)
		fut := troupetest.Go[int, int](ctx, p, 1)
		h1.Next(ctx).Respond(10)
		require.NoError(t, (<-fut).Err)

		h1.PanicOnReady("driver bug")
		r := <-troupetest.Go[int, int](ctx, p, 2)
		assert.ErrorIs(t, r.Err, troupe.ErrRestarted, "the request in hand is told the stage restarted")
		assert.ErrorIs(t, r.Err, troupe.ErrPanic)

		mock2, h2 := connection()
		h2.Allow(1)
		d.outcomes <- outcome{svc: mock2}
		fut = troupetest.Go[int, int](ctx, p, 3)
		h2.Next(ctx).Respond(30)
		assert.Equal(t, 30, (<-fut).Value, "a new connection replaced the one that panicked")
		assert.Equal(t, int64(2), rc.Counters().Connects)
	})
}
