package backoff

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/troupe-go/troupe"
)

// spec: RT10
func TestRT10_ExponentialFromMinToMax(t *testing.T) {
	e, err := New(200*time.Millisecond, 2*time.Second)
	require.NoError(t, err)
	var got []time.Duration
	for n := range 6 {
		got = append(got, e.Delay(n))
	}
	assert.Equal(t, []time.Duration{200e6, 400e6, 800e6, 1600e6, 2000e6, 2000e6}, got)
	assert.Equal(t, 2*time.Second, e.Base(1000), "no overflow, capped")
	assert.Equal(t, 200*time.Millisecond, e.Base(-1))

	g, err := GRPC()
	require.NoError(t, err)
	assert.Equal(t, time.Second, g.Base(0))
	assert.Equal(t, 1600*time.Millisecond, g.Base(1))
	assert.Equal(t, 2560*time.Millisecond, g.Base(2))
	assert.Equal(t, 120*time.Second, g.Base(20))
}

// half is the draw u = 1/2.
const half = 1 << 63

// spec: RT10
func TestRT10_JitterModes(t *testing.T) {
	full, _ := New(time.Second, time.Second, WithJitter(Full))
	assert.Equal(t, time.Duration(0), full.jitter(time.Second, 0))
	assert.Equal(t, 500*time.Millisecond, full.jitter(time.Second, half))
	assert.Equal(t, time.Second, full.jitter(time.Second, math.MaxUint64))
	ratio, _ := New(time.Nanosecond, time.Hour, WithJitter(Ratio(0.2)))
	assert.Equal(t, 800*time.Millisecond, ratio.jitter(time.Second, 0))
	assert.Equal(t, time.Second, ratio.jitter(time.Second, half))
	assert.Equal(t, 1200*time.Millisecond, ratio.jitter(time.Second, math.MaxUint64))

	g, err := GRPC(WithSource(rand.NewPCG(1, 1)))
	require.NoError(t, err)
	for n := range 50 {
		d, base := g.Delay(n), g.Base(n)
		assert.GreaterOrEqual(t, d, time.Duration(float64(base)*0.8))
		assert.LessOrEqual(t, d, time.Duration(float64(base)*1.2))
		assert.GreaterOrEqual(t, d, g.Min)
		assert.LessOrEqual(t, d, g.Max)
	}
}

// spec: RT10
func TestRT10_SeededSourceIsDeterministic(t *testing.T) {
	seq := func() []time.Duration {
		e, _ := New(10*time.Millisecond, time.Minute, WithJitter(Full), WithSource(rand.NewPCG(42, 7)))
		var out []time.Duration
		for n := range 10 {
			out = append(out, e.Delay(n))
		}
		return out
	}
	a, b := seq(), seq()
	assert.Equal(t, a, b)
	assert.NotEqual(t, a[3], a[4], "jittered")
}

// spec: RT10
func TestRT10_WaitIsCancellableByContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		assert.NoError(t, Wait(context.Background(), 3*time.Second))
		assert.Equal(t, 3*time.Second, time.Since(start))

		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		start = time.Now()
		assert.ErrorIs(t, Wait(ctx, time.Hour), context.DeadlineExceeded)
		assert.Equal(t, time.Second, time.Since(start))
		assert.ErrorIs(t, Wait(ctx, 0), context.DeadlineExceeded)
	})
}

// spec: RT10
func TestRT10_BadParametersAreErrors(t *testing.T) {
	for _, c := range []struct {
		min, max time.Duration
		opts     []Option
	}{
		{0, time.Second, nil},
		{-time.Second, time.Second, nil},
		{time.Second, time.Millisecond, nil},
		{time.Second, time.Second, []Option{WithMultiplier(0.5)}},
		{time.Second, time.Second, []Option{WithMultiplier(math.NaN())}},
		{time.Second, time.Second, []Option{WithMultiplier(math.Inf(1))}},
		{time.Second, time.Second, []Option{WithJitter(Ratio(1.5))}},
		{time.Second, time.Second, []Option{WithJitter(Ratio(-0.1))}},
		{time.Second, time.Second, []Option{WithJitter(Ratio(math.NaN()))}},
		{time.Second, time.Second, []Option{WithJitter(Ratio(math.Inf(1)))}},
		{time.Second, time.Second, []Option{WithJitter(Ratio(math.Inf(-1)))}},
	} {
		_, err := New(c.min, c.max, c.opts...)
		assert.ErrorIs(t, err, troupe.ErrBadConfig, "%v %v %+v", c.min, c.max, c.opts)
	}
}

// Regression: Base computed in float64, so that a huge Min came back
// smaller, and a ratio jitter near the largest Duration overflowed to a
// negative delay: a retry with no wait.
//
// spec: RT10
func TestRT10_DelaysStayWithinMinAndMaxAtTheEdges(t *testing.T) {
	const top = time.Duration(math.MaxInt64)
	huge := time.Duration(1<<53 + 1) // not a float64
	e, err := New(huge, top)
	require.NoError(t, err)
	assert.Equal(t, huge, e.Base(0), "Base(0) is Min")
	assert.Equal(t, top, e.Base(1000))

	for _, c := range []struct {
		min, max time.Duration
		opts     []Option
	}{
		{huge, top, nil},
		{huge, top, []Option{WithJitter(Ratio(0.2))}},
		{huge, top, []Option{WithJitter(Ratio(1))}},
		{time.Second, top, []Option{WithJitter(Ratio(0.5))}},
		{top - 1, top, []Option{WithJitter(Ratio(1))}},
		{top, top, []Option{WithJitter(Ratio(1))}},
		{time.Nanosecond, time.Nanosecond, []Option{WithJitter(Ratio(1))}},
		{time.Second, top, []Option{WithMultiplier(1.0000001), WithJitter(Ratio(0.2))}},
		{huge, top, []Option{WithMultiplier(math.MaxFloat64), WithJitter(Ratio(0.2))}},
	} {
		e, err := New(c.min, c.max, append(c.opts, WithSource(rand.NewPCG(1, 2)))...)
		require.NoError(t, err)
	draws:
		for _, n := range []int{-1, 0, 1, 2, 62, 63, 64, 1000, math.MaxInt} {
			for range 20 {
				if d := e.Delay(n); d < c.min || d > c.max {
					t.Errorf("min %v max %v: Delay(%d) = %v", c.min, c.max, n, d)
					break draws // one line per case
				}
			}
		}
	}

	full, _ := New(time.Second, top, WithJitter(Full), WithSource(rand.NewPCG(3, 4)))
	for n := range 100 {
		if d := full.Delay(n); d < 0 {
			t.Fatalf("full jitter: Delay(%d) = %v", n, d)
		}
	}
}

// spec: RT10
func TestRT10_AnExponentialBuiltByHandNeverGoesNegative(t *testing.T) {
	for _, e := range []Exponential{
		{},
		{Min: -time.Second, Max: -time.Hour, Multiplier: math.NaN(), Jitter: Ratio(math.NaN())},
		{Min: time.Second, Max: time.Millisecond, Multiplier: math.Inf(1), Jitter: Ratio(7)},
		{Min: time.Second, Max: math.MaxInt64, Multiplier: 0, Jitter: Full},
	} {
		for _, n := range []int{0, 1, 100, math.MaxInt} {
			assert.GreaterOrEqual(t, e.Delay(n), time.Duration(0), "%+v n %d", e, n)
			assert.LessOrEqual(t, e.Delay(n), max(e.Max, e.Min, 0), "%+v n %d", e, n)
		}
	}
}
