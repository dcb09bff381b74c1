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
	"github.com/troupe-go/troupe/stages/timeout"
	"github.com/troupe-go/troupe/supervisor"
	"github.com/troupe-go/troupe/troupetest"
)

// spec: HR3, HR2
func TestHR3_ClosingWhileDialingCancelsTheDialAndAnswersErrClosed(t *testing.T) {
	for _, how := range []string{"Reconnect.Close", "Pipeline.Close", "System.Shutdown"} {
		t.Run(how, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				sys := troupetest.NewSystem(t)
				d := newDialer() // no outcome queued: the dial hangs until its context ends
				p, rc := pipelineIn(t, sys, d, exact(t, time.Second, time.Minute, 2), 10, reconnect.ConnectTimeout(time.Hour))
				ctx := context.Background()
				var futs []<-chan troupetest.Timed[int]
				for i := range 3 {
					futs = append(futs, troupetest.GoTimed[int, int](ctx, p, i))
				}
				time.Sleep(10 * time.Second)
				synctest.Wait()
				require.Equal(t, reconnect.Connecting, rc.State())
				require.Len(t, d.times(), 1)

				cctx, cancel := context.WithTimeout(ctx, time.Minute)
				defer cancel()
				start := time.Now()
				var err error
				switch how {
				case "Reconnect.Close":
					err = rc.Close(cctx)
				case "Pipeline.Close":
					err = p.Close(cctx)
				default:
					err = sys.Shutdown(cctx)
				}
				assert.NoError(t, err, "nothing left waiting")
				assert.Zero(t, time.Since(start), "Close did not wait for the dial")
				for i, f := range futs {
					r := <-f
					assert.ErrorIs(t, r.Err, troupe.ErrClosed, "request %d", i)
					assert.Equal(t, 10*time.Second, r.Took, "request %d answered when Close came", i)
				}
				synctest.Wait()
				assert.Equal(t, []error{context.Canceled}, d.cancelled(), "the dial's context was cancelled")
				assert.Equal(t, reconnect.Closed, rc.State())
				assert.Equal(t, []time.Duration{0}, d.times(), "and no other dial started")
			})
		})
	}
}

// spec: HR3, HR2
func TestHR3_ClosingDuringTheBackoffAnswersErrClosed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := newDialer()
		p, rc := pipeline(t, d, time.Minute, 10)
		ctx := context.Background()
		d.outcomes <- outcome{err: errors.New("refused")}
		r := <-troupetest.Go[int, int](ctx, p, 1)
		require.ErrorIs(t, r.Err, reconnect.ErrConnect)
		fut := troupetest.GoTimed[int, int](ctx, p, 2) // waits for the backoff of a minute
		time.Sleep(time.Second)
		synctest.Wait()

		cctx, cancel := context.WithTimeout(ctx, time.Hour)
		defer cancel()
		require.NoError(t, rc.Close(cctx))
		got := <-fut
		assert.ErrorIs(t, got.Err, troupe.ErrClosed)
		assert.Equal(t, time.Second, got.Took, "answered at Close, not after the backoff")
		assert.Len(t, d.times(), 1, "no dial after Close")
	})
}

// spec: HR2, RC2
func TestCloseDrainsThroughALiveConnection(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := newDialer()
		p, rc := pipeline(t, d, time.Second, 10)
		ctx := context.Background()
		svc, h := connection()
		d.outcomes <- outcome{svc: svc}
		h.Allow(1)
		fut := troupetest.Go[int, int](ctx, p, 1)
		h.Next(ctx).Respond(10)
		require.NoError(t, (<-fut).Err)

		fut = troupetest.Go[int, int](ctx, p, 2) // waits for the connection's readiness
		synctest.Wait()
		closed := make(chan error, 1)
		go func() { closed <- rc.Close(ctx) }()
		time.Sleep(5 * time.Second)
		synctest.Wait()
		assert.Empty(t, closed, "Close waits for the request it holds")
		h.Allow(1)
		h.Next(ctx).Respond(20)
		assert.Equal(t, troupetest.Result[int]{Value: 20}, <-fut, "drained through the connection")
		assert.NoError(t, <-closed)
		assert.Equal(t, reconnect.Closed, rc.State())
		assert.Equal(t, []time.Duration{0}, d.times())
	})
}

// A stage above a Reconnect that dials waits for the requests it passed
// down: the host closes the connection actor first, so they are answered
// at once and the stage above drains.
//
// spec: HR3, HR2
func TestHR3_ClosingAPipelineWithStagesAboveADialingReconnect(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sys := troupetest.NewSystem(t)
		d := newDialer() // the dial hangs until its context ends
		p, err := supervisor.New(sys, "downstream", func(h troupe.Host) (troupe.Service[int, int], error) {
			rc, err := reconnect.New(h, reconnect.Dialer(d.dial), "peer:443", reconnect.ConnectTimeout(time.Hour))
			if err != nil {
				return nil, err
			}
			return timeout.New[int, int](h, rc, time.Hour)
		}, supervisor.WithBackoff(exact(t, time.Second, time.Minute, 2), 10, time.Minute))
		require.NoError(t, err)
		fut := troupetest.GoTimed[int, int](context.Background(), p, 1)
		time.Sleep(10 * time.Second)
		synctest.Wait()
		cctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		start := time.Now()
		require.NoError(t, p.Close(cctx))
		assert.Zero(t, time.Since(start), "Close did not wait for the dial nor its context")
		r := <-fut
		assert.ErrorIs(t, r.Err, troupe.ErrClosed)
		assert.Equal(t, 10*time.Second, r.Took)
	})
}
