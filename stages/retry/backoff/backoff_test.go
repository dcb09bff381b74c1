package backoff

import (
	"context"
	"math/rand/v2"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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

	g := GRPC()
	assert.Equal(t, time.Second, g.Base(0))
	assert.Equal(t, 1600*time.Millisecond, g.Base(1))
	assert.Equal(t, 2560*time.Millisecond, g.Base(2))
	assert.Equal(t, 120*time.Second, g.Base(20))
}

// spec: RT10
func TestRT10_JitterModes(t *testing.T) {
	full, _ := New(time.Second, time.Second, WithJitter(Full))
	assert.Equal(t, time.Duration(0), full.jitter(time.Second, 0))
	assert.Equal(t, 500*time.Millisecond, full.jitter(time.Second, 0.5))
	ratio, _ := New(time.Second, time.Second, WithJitter(Ratio(0.2)))
	assert.Equal(t, 800*time.Millisecond, ratio.jitter(time.Second, 0))
	assert.Equal(t, time.Second, ratio.jitter(time.Second, 0.5))
	assert.InDelta(t, float64(1200*time.Millisecond), float64(ratio.jitter(time.Second, 0.9999999)), 1e3)

	g := GRPC(WithSource(rand.NewPCG(1, 1)))
	for n := range 50 {
		d, base := g.Delay(n), g.Base(n)
		assert.GreaterOrEqual(t, d, time.Duration(float64(base)*0.8))
		assert.LessOrEqual(t, d, time.Duration(float64(base)*1.2))
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

func TestBadConfigIsAnError(t *testing.T) {
	for _, c := range []struct {
		min, max time.Duration
		opts     []Option
	}{
		{0, time.Second, nil},
		{time.Second, time.Millisecond, nil},
		{time.Second, time.Second, []Option{WithMultiplier(0.5)}},
		{time.Second, time.Second, []Option{WithJitter(Ratio(1.5))}},
		{time.Second, time.Second, []Option{WithJitter(Ratio(-0.1))}},
	} {
		_, err := New(c.min, c.max, c.opts...)
		assert.ErrorIs(t, err, ErrBadConfig)
	}
}
