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

// serve sends one request through p and has the connection h answer it.
func serve(t *testing.T, p troupe.Service[int, int], h *troupetest.Handle[int, int], v int) {
	t.Helper()
	ctx := context.Background()
	h.Allow(1)
	fut := troupetest.Go[int, int](ctx, p, v)
	h.Next(ctx).Respond(v)
	require.Equal(t, troupetest.Result[int]{Value: v}, <-fut)
}

// spec: HR8
func TestHR8_BackoffStartsOverAfterAHealthyConnection(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := newDialer()
		// gRPC's delays without jitter: 1 s, 1.6 s, 2.56 s...
		p, rc := pipelineIn(t, troupetest.NewSystem(t), d, exact(t, time.Second, 2*time.Minute, 1.6), 10)
		ctx := context.Background()
		refused := errors.New("refused")
		d.outcomes <- outcome{err: refused}
		require.ErrorIs(t, (<-troupetest.Go[int, int](ctx, p, 1)).Err, reconnect.ErrConnect) // dial at 0 s fails

		svc, h := connection()
		d.outcomes <- outcome{svc: svc}
		serve(t, p, h, 2) // dial at 1 s: connected
		time.Sleep(30 * time.Second)
		serve(t, p, h, 3) // still healthy at 31 s

		h.Break(errors.New("GOAWAY"))
		d.outcomes <- outcome{err: refused}
		d.outcomes <- outcome{err: refused}
		svc2, h2 := connection()
		d.outcomes <- outcome{svc: svc2}
		for i := range 2 {
			r := <-troupetest.Go[int, int](ctx, p, 10+i)
			require.ErrorIs(t, r.Err, reconnect.ErrConnect)
		}
		serve(t, p, h2, 20)
		assert.Equal(t, []time.Duration{
			0, time.Second, // a failure, then the base delay
			32 * time.Second,         // the connection broke at 31 s: the base delay again, not 1.6 s
			33600 * time.Millisecond, // then growing again: 1.6 s
			36160 * time.Millisecond, // 2.56 s
		}, d.times())
		assert.Equal(t, reconnect.Counters{Connects: 2, Failures: 4, Restarts: 4}, rc.Counters())
	})
}

// spec: HR8, SUP2
func TestHR8_ConnectionsThatBreakAtOnceStillHitTheIntensityLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := newDialer()
		p, rc := pipelineIn(t, troupetest.NewSystem(t), d, exact(t, time.Second, 2*time.Minute, 2), 3)
		ctx := context.Background()
		for range 4 {
			svc, h := connection()
			h.Break(errors.New("accepted, then reset")) // its first readiness check fails
			d.outcomes <- outcome{svc: svc}
		}
		r := <-troupetest.Go[int, int](ctx, p, 1)
		<-p.Failed()
		assert.ErrorIs(t, r.Err, troupe.ErrClosed, "the request waited through every connection, then the pipeline gave up")
		assert.Equal(t, []time.Duration{0, time.Second, 2 * time.Second, 3 * time.Second}, d.times(),
			"each connection was made, so each restart waits the base delay; the fourth failure in a minute is one too many")
		assert.ErrorIs(t, p.Err(), supervisor.ErrFailed)
		assert.Equal(t, reconnect.Failed, rc.State())
		assert.Equal(t, reconnect.Counters{Connects: 4, Failures: 4, Restarts: 3}, rc.Counters())
	})
}

// spec: HR8
func TestHR8_HealthyAfterRequiresAMinimumUptime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := newDialer()
		p, _ := pipelineIn(t, troupetest.NewSystem(t), d, exact(t, time.Second, 2*time.Minute, 2), 10, reconnect.HealthyAfter(5*time.Second))
		ups := []time.Duration{4999 * time.Millisecond, 4999 * time.Millisecond, 5 * time.Second}
		var hs []*troupetest.Handle[int, int]
		for range len(ups) + 1 {
			svc, h := connection()
			hs = append(hs, h)
			d.outcomes <- outcome{svc: svc}
		}
		serve(t, p, hs[0], 0) // connected at 0 s
		for i, up := range ups {
			time.Sleep(up)
			hs[i].Break(errors.New("GOAWAY"))
			serve(t, p, hs[i+1], i+1) // finds it broken, and is served by the next connection
		}
		assert.Equal(t, []time.Duration{
			0,
			4999*time.Millisecond + time.Second,    // up 4.999 s: not healthy, the first failure in a row: 1 s
			10998*time.Millisecond + 2*time.Second, // up 4.999 s again: the second failure in a row: 2 s
			17998*time.Millisecond + time.Second,   // up 5 s: healthy, so the backoff starts over: 1 s
		}, d.times())
	})
}

// spec: HR4
func TestNewRefusesABadConfiguration(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sys := troupetest.NewSystem(t)
		dial := reconnect.Dialer(newDialer().dial)
		for name, c := range map[string]struct {
			connector troupe.Service[string, troupe.Service[int, int]]
			opts      []reconnect.Option
		}{
			"no connector":            {nil, nil},
			"a nil dial function":     {reconnect.Dialer[string, int, int](nil), nil},
			"a connect timeout of 0":  {dial, []reconnect.Option{reconnect.ConnectTimeout(0)}},
			"a negative HealthyAfter": {dial, []reconnect.Option{reconnect.HealthyAfter(-time.Second)}},
		} {
			_, err := reconnect.New[string, int, int](sys, c.connector, "peer:443", c.opts...)
			assert.ErrorIs(t, err, troupe.ErrBadConfig, name)
		}
	})
}
