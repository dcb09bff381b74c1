package breaker_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/stages/breaker"
	"github.com/troupe-go/troupe/stages/fallback"
	"github.com/troupe-go/troupe/troupetest"
)

// A closed breaker adds no allocation to a call: it costs what a stage
// that watches outcomes (a fallback that never fires) costs, with a count
// window, and with slow calls in a time window.
//
// spec: API1, CB1
func TestAPI1_AClosedBreakerAddsNoAllocation(t *testing.T) {
	if testing.Short() {
		t.Skip("measures allocations")
	}
	sys := troupetest.NewSystem(t)
	echo := actors.Func(func(_ context.Context, v int) (int, error) { return v, nil })
	ctx := context.Background()
	allocs := func(svc troupe.Service[int, int]) float64 {
		for range 100 { // warm the pools
			_, _ = troupe.Do(ctx, svc, 1)
		}
		return testing.AllocsPerRun(1000, func() { _, _ = troupe.Do(ctx, svc, 1) })
	}
	base, err := fallback.New(sys, echo, func(context.Context, int, error) (int, error) { return 0, nil })
	require.NoError(t, err)
	counted, err := breaker.New[int, int](sys, echo)
	require.NoError(t, err)
	timed, err := breaker.New[int, int](sys, echo, breaker.TimeWindow(time.Second, 10), breaker.SlowCalls(time.Second, 0.5))
	require.NoError(t, err)
	want := allocs(base)
	assert.LessOrEqual(t, allocs(counted), want)
	assert.LessOrEqual(t, allocs(timed), want)
	assert.Equal(t, breaker.DefaultCountWindow, counted.Snapshot().Calls, "the calls were counted")
}
