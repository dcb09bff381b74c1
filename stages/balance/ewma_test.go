package balance_test

import (
	"context"
	"math"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/stages/balance"
	"github.com/troupe-go/troupe/troupetest"
)

// sleeper is an endpoint whose call takes as many milliseconds as its
// request says.
var sleeper = actors.Func(func(ctx context.Context, ms int) (int, error) {
	select {
	case <-time.After(time.Duration(ms) * time.Millisecond):
		return ms, nil
	case <-ctx.Done():
		return 0, ctx.Err()
	}
})

const ms = float64(time.Millisecond)

// tower's compound_decay, with its numbers: the cost is the estimate times
// one more than the calls in flight; a round trip above the estimate
// replaces it at once; with none seen it decays towards zero.
//
// spec: BAL1
func TestPeakEWMAHasTowersNumbers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		bal := newBalancer(t, map[string]troupe.Service[int, int]{"a": sleeper}, balance.PeakEWMA(time.Second, 20*time.Millisecond))
		cost := func() float64 { return stats(bal)["a"].Cost }
		ctx := context.Background()
		assert.Equal(t, 20*ms, cost())

		time.Sleep(100 * time.Millisecond)
		rsp0 := troupetest.Go[int, int](ctx, bal, 200)
		synctest.Wait()
		assert.InDelta(t, 2*20*ms*math.Exp(-0.1), cost(), 1, "decayed 100 ms, one call in flight")

		time.Sleep(100 * time.Millisecond)
		rsp1 := troupetest.Go[int, int](ctx, bal, 200)
		synctest.Wait()
		assert.Greater(t, cost(), 40*ms)

		time.Sleep(100 * time.Millisecond)
		require.NoError(t, (<-rsp0).Err)
		synctest.Wait()
		assert.InDelta(t, 400*ms, cost(), 1, "the 200 ms round trip is the estimate at once, times two")

		time.Sleep(100 * time.Millisecond)
		require.NoError(t, (<-rsp1).Err)
		synctest.Wait()
		assert.InDelta(t, 200*ms, cost(), 1)

		time.Sleep(time.Second)
		assert.InDelta(t, 200*ms*math.Exp(-1), cost(), 1, "one decay time later")
		assert.Less(t, cost(), 100*ms)
		time.Sleep(10 * time.Second)
		assert.Less(t, cost(), 0.1*ms)
	})
}

// After a slow round trip, fast ones pull the estimate down by the share
// of the decay time that passed: over one decay time the excess falls to
// 1/e of itself.
//
// spec: BAL1
func TestPeakEWMADecaysTowardsFastRoundTrips(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		bal := newBalancer(t, map[string]troupe.Service[int, int]{"a": sleeper}, balance.PeakEWMA(10*time.Second, 30*time.Millisecond))
		ctx := context.Background()
		rtt := func() float64 { return float64(stats(bal)["a"].RTT) }
		_, err := troupe.Do[int, int](ctx, bal, 500)
		require.NoError(t, err)
		synctest.Wait()
		assert.InDelta(t, 500*ms, rtt(), 1, "a slow round trip raises the estimate at once")
		for range 10 { // a 10 ms call each second, for the decay time
			time.Sleep(990 * time.Millisecond)
			_, err := troupe.Do[int, int](ctx, bal, 10)
			require.NoError(t, err)
		}
		synctest.Wait()
		assert.InDelta(t, 10*ms+490*ms*math.Exp(-1), rtt(), 10)
		_, err = troupe.Do[int, int](ctx, bal, 400)
		require.NoError(t, err)
		synctest.Wait()
		assert.InDelta(t, 400*ms, rtt(), 1, "a peak again")
	})
}

// A fresh endpoint starts at the default estimate; once a slow endpoint's
// round trip has raised its estimate, it loses the picks to a fast one.
//
// spec: BAL1
func TestASlowEndpointLosesThePicksToAFastOne(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		takes := func(d time.Duration) *actors.FuncService[int, int] {
			return actors.Func(func(context.Context, int) (int, error) {
				time.Sleep(d)
				return 0, nil
			})
		}
		bal := newBalancer(t, map[string]troupe.Service[int, int]{"fast": takes(time.Millisecond), "slow": takes(100 * time.Millisecond)})
		for _, s := range stats(bal) {
			assert.Equal(t, balance.DefaultRTT, s.RTT)
		}
		ctx := context.Background()
		for range 200 {
			_, err := troupe.Do[int, int](ctx, bal, 0)
			require.NoError(t, err)
		}
		s := stats(bal)
		assert.LessOrEqual(t, s["slow"].Picks, uint64(2), "picked before its first round trip was in, then never")
		assert.InDelta(t, 100*ms, float64(s["slow"].RTT), 10*ms)
		assert.Less(t, s["fast"].RTT, balance.DefaultRTT)
	})
}
