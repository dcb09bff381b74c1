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
// troupe.ErrBadConfig, a *troupe.ConfigError naming the option; none
// panics.
//
// spec: CB1, HR4
func TestHR4_BadConfigurationIsAnErrorAtConstruction(t *testing.T) {
	sys := troupetest.NewSystem(t)
	svc := actors.Func(func(_ context.Context, v int) (int, error) { return v, nil })
	for _, c := range []struct {
		name string
		opt  breaker.Option[int]
		want string // the option refused
	}{
		{"count window 0", breaker.CountWindow(0), "CountWindow"},
		{"count window too big", breaker.CountWindow(breaker.MaxCountWindow + 1), "CountWindow"},
		{"time window 0", breaker.TimeWindow(0, 1), "TimeWindow"},
		{"negative time window", breaker.TimeWindow(-time.Second, 1), "TimeWindow"},
		{"no buckets", breaker.TimeWindow(time.Second, 0), "TimeWindow"},
		{"too many buckets", breaker.TimeWindow(time.Hour, breaker.MaxBuckets+1), "TimeWindow"},
		{"unequal buckets", breaker.TimeWindow(time.Second, 7), "TimeWindow"},
		{"min calls 0", breaker.MinCalls(0), "MinCalls"},
		{"min calls above the window", breaker.MinCalls(breaker.DefaultCountWindow + 1), "MinCalls"},
		{"failure rate 0", breaker.FailureRate(0), "FailureRate"},
		{"failure rate above 1", breaker.FailureRate(1.01), "FailureRate"},
		{"failure rate NaN", breaker.FailureRate(math.NaN()), "FailureRate"},
		{"slow after 0", breaker.SlowCalls(0, 0.5), "SlowCalls"},
		{"slow rate 0", breaker.SlowCalls(time.Second, 0), "SlowCalls"},
		{"trials 0", breaker.HalfOpenTrials(0), "HalfOpenTrials"},
		{"open delay 0", breaker.OpenDelay(0), "OpenDelay"},
		{"factor below 1", breaker.GrowOpenDelay(0.5, time.Hour), "GrowOpenDelay"},
		{"factor infinite", breaker.GrowOpenDelay(math.Inf(1), time.Hour), "GrowOpenDelay"},
		{"limit below the delay", breaker.GrowOpenDelay(2, time.Second), "GrowOpenDelay"},
		{"nil classifier", breaker.Classify[int](nil), "Classify"},
		// A classifier of another type does not compile; converted by force,
		// it is New's error.
		{"classifier of another type", breaker.Option[int](breaker.Classify(func(string, error) bool { return false })), "Classify"},
		{"nil OnStateChange", breaker.OnStateChange(nil), "OnStateChange"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := breaker.New[int, int](sys, svc, c.opt)
			troupetest.BadOption(t, err, "breaker", c.want)
			_, err = stages.Stack[int, int]().Breaker(c.opt).Build(sys, svc)
			troupetest.BadOption(t, err, "breaker", c.want)
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
	for _, opts := range [][]breaker.Option[int]{
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
