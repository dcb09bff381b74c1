package breaker_test

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/stages"
	"github.com/troupe-go/troupe/stages/breaker"
	"github.com/troupe-go/troupe/troupetest"
)

// Every bad option is an error at construction, matching
// troupe.ErrBadConfig and the package's sentinel; none panics.
//
// spec: CB1, HR4
func TestHR4_BadConfigurationIsAnErrorAtConstruction(t *testing.T) {
	sys := troupetest.NewSystem(t)
	svc := actors.Func(func(_ context.Context, v int) (int, error) { return v, nil })
	for _, c := range []struct {
		name string
		opt  breaker.Option
		want error
	}{
		{"count window 0", breaker.CountWindow(0), breaker.ErrBadWindow},
		{"count window too big", breaker.CountWindow(breaker.MaxCountWindow + 1), breaker.ErrBadWindow},
		{"time window 0", breaker.TimeWindow(0, 1), breaker.ErrBadWindow},
		{"negative time window", breaker.TimeWindow(-time.Second, 1), breaker.ErrBadWindow},
		{"no buckets", breaker.TimeWindow(time.Second, 0), breaker.ErrBadWindow},
		{"too many buckets", breaker.TimeWindow(time.Hour, breaker.MaxBuckets+1), breaker.ErrBadWindow},
		{"unequal buckets", breaker.TimeWindow(time.Second, 7), breaker.ErrBadWindow},
		{"min calls 0", breaker.MinCalls(0), breaker.ErrBadWindow},
		{"min calls above the window", breaker.MinCalls(breaker.DefaultCountWindow + 1), breaker.ErrBadWindow},
		{"failure rate 0", breaker.FailureRate(0), breaker.ErrBadThreshold},
		{"failure rate above 1", breaker.FailureRate(1.01), breaker.ErrBadThreshold},
		{"failure rate NaN", breaker.FailureRate(math.NaN()), breaker.ErrBadThreshold},
		{"slow after 0", breaker.SlowCalls(0, 0.5), breaker.ErrBadThreshold},
		{"slow rate 0", breaker.SlowCalls(time.Second, 0), breaker.ErrBadThreshold},
		{"trials 0", breaker.HalfOpenTrials(0), breaker.ErrBadTrials},
		{"open delay 0", breaker.OpenDelay(0), breaker.ErrBadDelay},
		{"factor below 1", breaker.GrowOpenDelay(0.5, time.Hour), breaker.ErrBadDelay},
		{"factor infinite", breaker.GrowOpenDelay(math.Inf(1), time.Hour), breaker.ErrBadDelay},
		{"limit below the delay", breaker.GrowOpenDelay(2, time.Second), breaker.ErrBadDelay},
		{"nil classifier", breaker.Classify[int](nil), breaker.ErrBadFunc},
		{"classifier of another type", breaker.Classify(func(string, error) bool { return false }), breaker.ErrBadFunc},
		{"nil OnStateChange", breaker.OnStateChange(nil), breaker.ErrBadFunc},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := breaker.New[int, int](sys, svc, c.opt)
			assert.ErrorIs(t, err, c.want)
			assert.ErrorIs(t, err, troupe.ErrBadConfig)
			_, err = stages.Stack[int, int]().Breaker(c.opt).Build(sys, svc)
			assert.ErrorIs(t, err, c.want, "Build says so too")
		})
	}
	_, err := breaker.New[int, int](sys, nil)
	assert.ErrorIs(t, err, troupe.ErrBadConfig, "a nil inner service")
}

// The limits are inclusive, and options combine in any order.
//
// spec: CB1, HR4
func TestHR4_TheLimitsOfTheOptionsAreAccepted(t *testing.T) {
	sys := troupetest.NewSystem(t)
	svc := actors.Func(func(_ context.Context, v int) (int, error) { return v, nil })
	for _, opts := range [][]breaker.Option{
		{breaker.CountWindow(1)},
		{breaker.CountWindow(breaker.MaxCountWindow), breaker.MinCalls(breaker.MaxCountWindow)},
		{breaker.TimeWindow(time.Duration(breaker.MaxBuckets), breaker.MaxBuckets), breaker.MinCalls(1000)},
		{breaker.FailureRate(1), breaker.SlowCalls(time.Nanosecond, 1), breaker.HalfOpenTrials(1)},
		{breaker.GrowOpenDelay(1, 0), breaker.OpenDelay(time.Nanosecond)},
		{breaker.GrowOpenDelay(3, time.Minute), breaker.OpenDelay(time.Minute)},
	} {
		br, err := breaker.New[int, int](sys, svc, opts...)
		require.NoError(t, err)
		require.NoError(t, br.Close(context.Background()))
	}
}
