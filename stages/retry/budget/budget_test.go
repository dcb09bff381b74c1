package budget

import (
	"math"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/troupe-go/troupe"
)

// drain withdraws from b at now until it refuses, and returns how many
// retries it allowed. It stops after want+1, so that a budget that never
// refuses fails the test instead of hanging it.
func drain(b *Budget, now time.Time, want int) int {
	n := 0
	for n <= want && b.WithdrawAt(now) {
		n++
	}
	return n
}

// spec: RT11
func TestRT11_FloorAllowsMinPerSecondWithoutTraffic(t *testing.T) {
	b := Default()
	now := b.start
	assert.Equal(t, 100, drain(b, now, 100), "10 retries per second over a 10 s window")
	assert.False(t, b.WithdrawAt(now.Add(9*time.Second)), "still spent within the window")
	assert.True(t, b.WithdrawAt(now.Add(10*time.Second)), "the window moved on: the floor is back")
}

// spec: RT11
func TestRT11_RatioOfRequests(t *testing.T) {
	b, err := New(10*time.Second, 0, 0.2)
	require.NoError(t, err)
	now := b.start
	assert.False(t, b.WithdrawAt(now), "no floor, no requests: no retry")
	for range 50 {
		b.DepositAt(now)
	}
	assert.Equal(t, 10, drain(b, now, 10), "20 % of 50 requests")
	assert.Equal(t, int64(0), b.RemainingAt(now))
}

// spec: RT11
func TestRT11_DepositsExpireAfterTheWindow(t *testing.T) {
	b, _ := New(10*time.Second, 0, 0.5)
	start := b.start
	for range 10 {
		b.DepositAt(start) // 5 retries' worth, in the first slot
	}
	assert.Equal(t, int64(5), b.RemainingAt(start.Add(9*time.Second)))
	assert.Equal(t, int64(0), b.RemainingAt(start.Add(10*time.Second)), "forgotten after the ttl")
	b.DepositAt(start.Add(10 * time.Second))
	b.DepositAt(start.Add(10 * time.Second))
	assert.Equal(t, int64(1), b.RemainingAt(start.Add(15*time.Second)))
	assert.Equal(t, int64(0), b.RemainingAt(start.Add(time.Hour)), "a long pause forgets everything")
}

// spec: RT11
func TestRT11_RatioAboveOne(t *testing.T) {
	b, _ := New(time.Second, 0, 2)
	b.DepositAt(b.start)
	assert.Equal(t, int64(2), b.RemainingAt(b.start), "two retries per request")
}

// spec: RT11
func TestRT11_ConcurrentUseNeverOverspends(t *testing.T) {
	b, _ := New(10*time.Second, 1, 0.2)
	var wg sync.WaitGroup
	var mu sync.Mutex
	won := 0
	for range 8 {
		wg.Go(func() {
			for range 100 {
				b.Deposit()
				if b.Withdraw() {
					mu.Lock()
					won++
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	assert.LessOrEqual(t, won, 10+800/5, "floor 10 + 20 % of 800 requests")
}

// Regression: tower's budget (and ours) read the ratio through 1/r,
// truncated: 0.6 over 10 requests allowed 10 retries, 0.4 allowed 5.
//
// spec: HR7
func TestHR7_RatioOverNRequestsAllowsExactlyFloorNR(t *testing.T) {
	for _, c := range []struct {
		ratio float64
		n     int
		want  int64
	}{
		{0.1, 9, 0}, {0.1, 10, 1}, {0.1, 19, 1}, {0.1, 100, 10},
		{0.2, 4, 0}, {0.2, 7, 1}, {0.2, 10, 2},
		{0.4, 2, 0}, {0.4, 3, 1}, {0.4, 5, 2}, {0.4, 10, 4},
		{0.5, 1, 0}, {0.5, 3, 1}, {0.5, 10, 5},
		{0.6, 1, 0}, {0.6, 2, 1}, {0.6, 5, 3}, {0.6, 10, 6},
		{1.0, 1, 1}, {1.0, 10, 10},
		{1 / 3.0, 2, 0}, {1 / 3.0, 3, 1}, {2.5, 3, 7}, {1000, 3, 3000},
		{0.1, 10_007, 1000}, {0.4, 10_007, 4002}, {0.6, 10_007, 6004}, {0.000001, 10_007, 0},
		{0.1, 1e12 + 3, 1e11}, {0.4, 1e12 + 3, 4e11 + 1}, {0.6, 1e12 + 3, 6e11 + 1},
		{0.000001, 1_999_999, 1}, {0.000001, 2_000_000, 2}, {1 / 3.0, 1e12 + 2, 333_333_333_334},
	} {
		b, err := New(10*time.Second, 0, c.ratio)
		require.NoError(t, err)
		now := b.start
		if c.n > 10_007 {
			b.slot[0] = int64(c.n) * b.deposit // as many DepositAt(now) calls
		} else {
			for range c.n {
				b.DepositAt(now)
			}
		}
		assert.Equal(t, c.want, b.RemainingAt(now), "ratio %v over %d requests", c.ratio, c.n)
		if c.want <= 10 {
			assert.Equal(t, int(c.want), drain(b, now, int(c.want)), "ratio %v over %d requests", c.ratio, c.n)
		}
	}
}

// spec: HR7
func TestHR7_FloorAddsToTheRatio(t *testing.T) {
	for _, c := range []struct {
		ttl      time.Duration
		min      int
		ratio    float64
		requests int
		want     int
	}{
		{10 * time.Second, 10, 0.6, 10, 106},
		{10 * time.Second, 1, 0.4, 10, 14},
		{1500 * time.Millisecond, 10, 0, 0, 15}, // per second of the window, not per whole second
		{time.Second, 3, 0.5, 5, 5},
	} {
		b, err := New(c.ttl, c.min, c.ratio)
		require.NoError(t, err)
		now := b.start
		for range c.requests {
			b.DepositAt(now)
		}
		assert.Equal(t, c.want, drain(b, now, c.want), "%+v", c)
	}
}

// spec: HR7
func TestHR7_HugeFiguresSaturateInsteadOfOverflowing(t *testing.T) {
	b, err := New(time.Minute, math.MaxInt, 1000)
	require.NoError(t, err)
	now := b.start
	for range 10 {
		b.DepositAt(now)
	}
	assert.Equal(t, int64(math.MaxInt64), b.RemainingAt(now))
	assert.True(t, b.WithdrawAt(now))
}

func TestBadConfigIsAnError(t *testing.T) {
	for _, c := range []struct {
		ttl   time.Duration
		min   int
		ratio float64
	}{
		{0, 1, 0.2}, {2 * time.Minute, 1, 0.2}, {time.Second, -1, 0.2}, {time.Second, 1, -1}, {time.Second, 1, 1001},
		{time.Second, 1, math.NaN()}, {time.Second, 1, math.Inf(1)}, {time.Second, 1, 1e-9},
	} {
		_, err := New(c.ttl, c.min, c.ratio)
		assert.ErrorIs(t, err, troupe.ErrBadConfig, "%+v", c)
	}
}

func TestRatioIsReadAsTheNearestFraction(t *testing.T) {
	for _, c := range []struct {
		r    float64
		p, q int64
	}{
		{0, 0, 1}, {0.1, 1, 10}, {0.2, 1, 5}, {0.6, 3, 5}, {1 / 3.0, 1, 3}, {2 / 7.0, 2, 7},
		{1, 1, 1}, {2.5, 5, 2}, {1000, 1000, 1}, {0.000001, 1, 1_000_000}, {0.999999, 999_999, 1_000_000},
	} {
		p, q := fraction(c.r)
		assert.Equal(t, [2]int64{c.p, c.q}, [2]int64{p, q}, "%v", c.r)
	}
	for _, r := range []float64{0.1234567, math.Pi, math.E * 100, 1 / math.Sqrt2} {
		p, q := fraction(r)
		assert.LessOrEqual(t, q, int64(maxDen))
		assert.InDelta(t, r, float64(p)/float64(q), 1e-10, "%v read as %d/%d", r, p, q)
	}
}
