package supervisor_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/backoff"
	"github.com/troupe-go/troupe/supervisor"
	"github.com/troupe-go/troupe/troupetest"
)

// grpcBase is gRPC's n-th connection backoff delay before jitter, computed
// here from its definition: 1 s times 1.6^n, at most 120 s.
func grpcBase(n int) time.Duration {
	return min(120*time.Second, time.Duration(float64(time.Second)*math.Pow(1.6, float64(n))))
}

// assertJitter checks that delays/bases are ratios in [0.8, 1.2] and
// spread over that range, as a jitter of 0.2 makes them: a jitter-free
// backoff has every ratio 1.
func assertJitter(t *testing.T, ratios []float64, spread float64) {
	t.Helper()
	for i, r := range ratios {
		assert.InDelta(t, 1, r, 0.2+1e-9, "delay %d is its base delay +- 20 %%", i)
	}
	lo, hi := slices.Min(ratios), slices.Max(ratios)
	assert.Greater(t, hi-lo, spread, "the delays are jittered: ratios to the base delay from %v to %v", lo, hi)
}

// spec: SUP1, RT10
func TestSUP1_DefaultPipelineRestartsAreJitteredAndCapped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		pl, p := probed(t, troupetest.NewSystem(t)) // the defaults: gRPC's backoff, 10 restarts in 60 s
		var ratios []float64
		for k := 1; k <= 16; k++ {
			got := p.failAndTime(streak(k))
			base := grpcBase(k - 1)
			ratios = append(ratios, float64(got)/float64(base))
			if k >= 12 {
				assert.GreaterOrEqual(t, got, 96*time.Second, "failure %d: capped at 120 s, -20 %%", k)
				assert.LessOrEqual(t, got, 144*time.Second, "failure %d: capped at 120 s, +20 %%", k)
			}
		}
		assertJitter(t, ratios, 0.1)
		assert.NoError(t, pl.Err(), "a backoff that grows keeps under the intensity limit")
		assert.Equal(t, supervisor.Stats{Restarts: 16}, pl.Stats())
	})
}

// spec: SUP1, RT10
func TestSUP1_SeededBackoffRestartsAtExactTimes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		delays, err := backoff.GRPC(backoff.WithSource(rand.NewPCG(3, 4)))
		require.NoError(t, err)
		pl, p := probed(t, troupetest.NewSystem(t), supervisor.WithBackoff(delays, 100, time.Hour))
		same, err := backoff.GRPC(backoff.WithSource(rand.NewPCG(3, 4))) // the same draws, made here
		require.NoError(t, err)
		var ratios []float64
		for n := range 16 {
			got := p.failAndTime(errors.New("boom")) // counted in the window: the n-th failure of an hour
			assert.Equal(t, same.Delay(n), got, "restart %d: exactly the seeded delay", n)
			ratios = append(ratios, float64(got)/float64(grpcBase(n)))
		}
		assertJitter(t, ratios, 0.1)
		assert.Equal(t, supervisor.Stats{Restarts: 16}, pl.Stats())
	})
}

// spec: SUP1, RT10
func TestDefaultBackoffIsGRPCs(t *testing.T) {
	b := supervisor.DefaultBackoff()
	assert.Equal(t, time.Second, b.Delays.Min)
	assert.Equal(t, 120*time.Second, b.Delays.Max)
	assert.Equal(t, 1.6, b.Delays.Multiplier)
	grpc, err := backoff.GRPC()
	require.NoError(t, err)
	assert.Equal(t, grpc, b.Delays, "backoff.GRPC's delays")
	assert.Equal(t, 10, b.MaxRestarts)
	assert.Equal(t, time.Minute, b.Window)
	rs := &failures{}
	rs.Fail()
	var ratios []float64
	for i := range 400 {
		n := i % 20
		d := b.Decide(rs.Of(streak(n + 1)))
		require.Equal(t, actors.Restart, d.Directive)
		ratios = append(ratios, float64(d.Delay)/float64(grpcBase(n)))
	}
	assertJitter(t, ratios, 0.3) // 400 draws: each end of the range is reached within 5 %

	_, err = supervisor.NewBackoff(backoff.Exponential{}, 1, time.Second)
	assert.ErrorIs(t, err, troupe.ErrBadConfig)
	_, err = supervisor.NewBackoff(grpc, -1, time.Second)
	assert.ErrorIs(t, err, troupe.ErrBadConfig)
}

// panicky is a Streak whose Streak method panics.
type panicky struct{}

func (panicky) Error() string { return "panicky" }
func (panicky) Streak() int   { panic("streak bug") }

// spec: HR8, SUP2, HR1
func TestHR8_StreakSetsTheDelayAndIntensityStillCounts(t *testing.T) {
	delays, err := backoff.New(time.Second, time.Hour) // 1 s, 2 s, 4 s...
	require.NoError(t, err)
	b, err := supervisor.NewBackoff(delays, 3, time.Minute)
	require.NoError(t, err)
	rs := &failures{}
	for range 3 {
		rs.Fail()
	}
	restart := func(d time.Duration) actors.Decision { return actors.Decision{Directive: actors.Restart, Delay: d} }
	assert.Equal(t, restart(4*time.Second), b.Decide(rs.Of(errors.New("plain"))), "no streak: 2 failures before this one in the window")
	assert.Equal(t, restart(4*time.Second), b.Decide(rs.Of("a panic value")))
	assert.Equal(t, restart(time.Second), b.Decide(rs.Of(streak(1))), "the first failure since it was healthy")
	assert.Equal(t, restart(8*time.Second), b.Decide(rs.Of(streak(4))), "the streak may outlast the window")
	assert.Equal(t, restart(2*time.Second), b.Decide(rs.Of(fmt.Errorf("dial: %w", streak(2)))), "found in the chain")
	assert.Equal(t, restart(4*time.Second), b.Decide(rs.Of(panicky{})), "a panicking Streak is ignored, not a crash")
	rs.Fail()
	assert.Equal(t, actors.Decision{Directive: actors.Stop}, b.Decide(rs.Of(streak(1))), "4 failures in a minute: the intensity stops it, streak or not")
	assert.Equal(t, int64(6), b.Restarts())
	assert.Equal(t, int64(1), b.Stops())
}
