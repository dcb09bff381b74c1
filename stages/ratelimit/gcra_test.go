package ratelimit

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// spec: RL4
func TestRL4b_GCRABurstOneSpacesCallsOneIntervalApart(t *testing.T) {
	g := newGCRA(Rate{Num: 5, Per: time.Second}, 1)
	for i := range 10 {
		now := at(time.Duration(i) * 200 * ms)
		require.True(t, g.take(now), "call %d", i)
		until, limited := g.limitedUntil(now)
		assert.True(t, limited)
		assert.Equal(t, now.Add(200*ms), until)
		assert.False(t, g.take(now.Add(199*ms)), "not a nanosecond early")
		assert.Equal(t, 0, g.remaining(now.Add(199*ms)))
	}
}

// spec: RL4
func TestRL4b_GCRABurstGoesAtOnceThenOnePerInterval(t *testing.T) {
	g := newGCRA(Rate{Num: 5, Per: time.Second}, 3)
	assert.Equal(t, 3, g.remaining(t0))
	for i := range 3 {
		require.True(t, g.take(t0), "burst call %d", i)
		assert.Equal(t, 2-i, g.remaining(t0))
	}
	until, limited := g.limitedUntil(t0)
	assert.True(t, limited)
	assert.Equal(t, at(200*ms), until)
	assert.Equal(t, Snapshot{Until: at(200 * ms), Remaining: 0}, g.snapshot(t0))
	assert.False(t, g.take(at(199*ms)))
	require.True(t, g.take(at(200*ms)))
	assert.False(t, g.take(at(399*ms)))
	require.True(t, g.take(at(400*ms)))

	// A quiet spell refills the bucket to the burst, never beyond.
	assert.Equal(t, 1, g.remaining(at(600*ms)))
	assert.Equal(t, 3, g.remaining(at(time.Hour)))
	for range 3 {
		require.True(t, g.take(at(time.Hour)))
	}
	assert.False(t, g.take(at(time.Hour)))
}

// spec: RL4
func TestRL4b_GCRAAbsorbsLatenessWithinItsTolerance(t *testing.T) {
	g := newGCRA(Rate{Num: 5, Per: time.Second}, 2)
	g.take(t0)
	g.take(t0) // due again at 200 ms
	require.True(t, g.take(at(350*ms)), "processed 150 ms late")
	until, _ := g.limitedUntil(at(350 * ms))
	assert.Equal(t, at(400*ms), until, "the schedule did not move")
}

// spec: RL4
func TestRL4b_GCRANeverExceedsNumInAnyPeriodWithBurstOne(t *testing.T) {
	for _, r := range []Rate{{5, time.Second}, {3, time.Second}, {7, 10 * ms}} {
		g := newGCRA(r, 1)
		var times []time.Time
		for now := t0; now.Before(t0.Add(20 * r.Per)); now = now.Add(time.Millisecond / 3) {
			if g.take(now) {
				times = append(times, now)
			}
		}
		for i := range times {
			n := 0
			for j := i; j < len(times) && times[j].Before(times[i].Add(r.Per)); j++ {
				n++
			}
			require.LessOrEqual(t, n, r.Num, "rate %+v at %v", r, times[i].Sub(t0))
		}
	}
}
