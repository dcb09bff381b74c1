package hedge_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe/stages/hedge"
	"github.com/troupe-go/troupe/troupetest"
)

// hedgedAt makes one request whose original never answers by itself and
// returns when its hedge reached the mock, after the request was made;
// the hedge then wins.
func hedgedAt(t *testing.T, x *hedge.Hedge[int, int], h *troupetest.Handle[int, int], within time.Duration) time.Duration {
	t.Helper()
	h.Allow(2)
	start := time.Now()
	got := troupetest.Go(bg, x, 0)
	orig := next(t, h)
	var hedged *troupetest.Request[int, int]
	for hedged == nil && time.Since(start) < within {
		time.Sleep(ms)
		synctest.Wait()
		hedged = h.TryNext()
	}
	require.NotNil(t, hedged, "no hedge within %v", within)
	took := time.Since(start)
	hedged.Respond(1)
	require.Equal(t, troupetest.Result[int]{Value: 1}, <-got)
	require.ErrorIs(t, orig.Ctx.Err(), context.Canceled)
	return took
}

// spec: H1
func TestH1_PercentileDelayOnceTheWindowHasTheMinimumOfSamples(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		x, h := overMock(t, hedge.Percentile(90, 10), hedge.NoBudget())
		lat := []time.Duration{70, 10, 100, 40, 20, 90, 30, 60, 50, 80} // ms, in the order they come
		for i, d := range lat[:9] {
			sample(t, x, h, d*ms)
			_, ok := x.Delay()
			assert.False(t, ok, "no hedging with %d samples", i+1)
		}
		// A request made now is not hedged at all, however long it takes.
		h.Allow(2)
		got := troupetest.Go(bg, x, 5)
		slow := next(t, h)
		time.Sleep(time.Second)
		none(t, h, "not hedged before the window has 10 samples")
		slow.Respond(5)
		assert.Equal(t, troupetest.Result[int]{Value: 5}, <-got)
		assert.Equal(t, 10, x.Counts().Samples, "its own latency counted: 1 s")
		d, ok := x.Delay()
		assert.True(t, ok)
		// Samples 10..70, 90, 100 ms and 1 s: the 9th of 10 is 100 ms.
		assert.Equal(t, 100*ms, d)

		sample(t, x, h, lat[9]*ms) // 11 samples: ceil(0.9*11) = 10th = 100 ms
		d, _ = x.Delay()
		assert.Equal(t, 100*ms, d)
		assert.Equal(t, 100*ms, hedgedAt(t, x, h, time.Second))
		// The winning hedge answered at once: a sample of 0. 12 samples, the
		// 11th (ceil(10.8)) is 100 ms.
		assert.Equal(t, 12, x.Counts().Samples)
		d, _ = x.Delay()
		assert.Equal(t, 100*ms, d)
	})
}

// spec: H1
func TestH1_FixedDelayUntilThePercentileHasItsSamplesThenWindowExpiry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		x, h := overMock(t, hedge.Percentile(50, 3), hedge.Delay(500*ms), hedge.Window(10*time.Second, 3), hedge.NoBudget())
		d, ok := x.Delay()
		assert.Equal(t, 500*ms, d)
		assert.True(t, ok)
		assert.Equal(t, 500*ms, hedgedAt(t, x, h, time.Second), "the fixed delay first")
		// That hedge answered at once: one sample of 0.
		sample(t, x, h, 40*ms)
		sample(t, x, h, 20*ms)
		d, _ = x.Delay()
		assert.Equal(t, 20*ms, d, "median of 0, 20, 40 ms")
		sample(t, x, h, 30*ms) // the window keeps 3: 20, 40, 30
		d, _ = x.Delay()
		assert.Equal(t, 30*ms, d)
		assert.Equal(t, 30*ms, hedgedAt(t, x, h, time.Second))

		time.Sleep(10 * time.Second)
		assert.Equal(t, 0, x.Counts().Samples, "samples older than the window's span are forgotten")
		d, _ = x.Delay()
		assert.Equal(t, 500*ms, d, "back to the fixed delay")
	})
}

// spec: H1
func TestH1_OnlySuccessesAreLatencySamples(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		x, h := overMock(t, hedge.Percentile(50, 1), hedge.NoBudget())
		h.Allow(1)
		got := troupetest.Go(bg, x, 1)
		r := next(t, h)
		time.Sleep(20 * ms)
		r.Fail(err503)
		assert.Equal(t, troupetest.Result[int]{Err: err503}, <-got)
		assert.Equal(t, 0, x.Counts().Samples)
		sample(t, x, h, 20*ms)
		assert.Equal(t, 1, x.Counts().Samples)
	})
}
