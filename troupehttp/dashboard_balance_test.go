package troupehttp_test

import (
	"context"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/stages/balance"
	"github.com/troupe-go/troupe/troupehttp"
)

// A balancer registered with the dashboard shows one card per endpoint:
// its state (ready, failing...), calls in flight, picks and errors a
// second and its round-trip estimate, from the balancer's stats alone; an
// endpoint removed leaves the view.
//
// spec: PP5, BAL1
func TestDashboardShowsABalancersEndpoints(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d, err := troupehttp.NewDashboard()
		require.NoError(t, err)
		var failing atomic.Bool
		failing.Store(true)
		echo := actors.Func(func(_ context.Context, v int) (int, error) {
			time.Sleep(5 * time.Millisecond)
			return v, nil
		})
		sick := actors.Func(func(_ context.Context, v int) (int, error) {
			if failing.Load() {
				return 0, errDown
			}
			return v, nil
		})
		bal, err := balance.New[string, int, int](nil, balance.FailureCooldown(time.Minute), balance.WithSource(rand.NewPCG(1, 2)))
		require.NoError(t, err)
		defer bal.Close(context.Background())
		bal.Insert("10.0.0.1:80", echo)
		bal.Insert("10.0.0.2:80", sick)
		require.NoError(t, d.Register("replicas", bal))
		rec := newSSERecorder()
		cancel, done := openStream(d, rec)
		defer func() { cancel(); <-done }()

		f, _ := rec.next(t)
		one := f.stage(t, "replicas", "10.0.0.1:80")
		assert.Equal(t, "ready", one.Endpoint)
		assert.True(t, one.Unbounded)
		assert.Nil(t, one.Picks, "no rate before a second sample")
		for i := range 20 {
			_, _ = troupe.Do[int, int](context.Background(), bal, i)
		}
		f, _ = rec.next(t)
		one, two := f.stage(t, "replicas", "10.0.0.1:80"), f.stage(t, "replicas", "10.0.0.2:80")
		assert.Equal(t, "failing", two.Endpoint, "its one call failed: in its cooldown")
		assert.Equal(t, 1.0, *two.Picks)
		assert.Equal(t, 1.0, *two.Errors)
		assert.Equal(t, 19.0, *one.Picks)
		assert.Zero(t, *one.Errors)
		assert.Positive(t, *one.RTTMs)
		assert.Equal(t, []float64{0, 19}, one.SeriesAccepted, "an endpoint plots its picks")

		bal.Remove("10.0.0.2:80")
		f, _ = rec.next(t)
		require.Len(t, f.Stacks[0].Stages, 1, "the endpoint removed left")
		assert.Equal(t, "10.0.0.1:80", f.Stacks[0].Stages[0].Name)
	})
}
