package hedge_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/stages/hedge"
	"github.com/troupe-go/troupe/stages/limit"
	"github.com/troupe-go/troupe/troupetest"
)

// A request answered before its delay (no hedge fires) allocates nothing
// more than it does through a concurrency limit: its session is pooled
// and reused, and its original's context is carved from a slab.
//
// spec: H1, API1
func TestH1_AnUnhedgedRequestAllocatesNoMoreThanALimit(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("measures allocations")
	}
	sys := troupetest.NewSystem(t)
	echo := actors.Func(func(_ context.Context, v int) (int, error) { return v, nil })
	ctx := context.Background()
	allocs := func(svc troupe.Service[int, int]) float64 {
		for range 100 { // warm the pools
			_, _ = troupe.Do(ctx, svc, 1)
		}
		return testing.AllocsPerRun(1000, func() {
			p, err := svc.Reserve(ctx)
			if err == nil {
				_, _ = p.Call(ctx, 1)
			}
		})
	}
	lim, err := limit.New(sys, echo, 20)
	require.NoError(t, err)
	x, err := hedge.New(sys, echo, hedge.Delay(time.Second))
	require.NoError(t, err)
	want, got := allocs(lim), allocs(x)
	t.Logf("allocations per call: %v through a limit, %v through a hedge", want, got)
	assert.LessOrEqual(t, got, want)
	assert.Zero(t, got)
	assert.Equal(t, uint64(0), x.Counts().Hedges)
	require.NoError(t, lim.Close(ctx))
	require.NoError(t, x.Close(ctx))
}
