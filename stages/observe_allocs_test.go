package stages_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/stages"
	"github.com/troupe-go/troupe/stages/ratelimit"
	"github.com/troupe-go/troupe/troupetest"
)

// counting counts events by type, without allocating.
type counting struct {
	n [troupe.EventRestarted + 1]atomic.Int64
}

func (c *counting) Observe(ev troupe.Event) { c.n[ev.Type].Add(1) }

// The 4-stage stack (limit, timeout, retry, rate limit) costs one
// allocation per call (the timeout's call context, see docs/decisions.md)
// with no observer, as it did before observers existed; and an observer
// that allocates nothing itself adds none.
//
// spec: OB1, API1
func TestOB1_NoObserverAddsNoAllocation(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("measures allocations")
	}
	sys := troupetest.NewSystem(t)
	ctx := context.Background()
	echo := actors.Func(func(_ context.Context, v int) (int, error) { return v, nil })
	four := stages.Stack[int, int]().Limit(20).Timeout(10*time.Second).Retry(3, nil).
		RateLimit(ratelimit.Rate{Num: 1_000_000_000, Per: time.Second})
	allocs := func(svc troupe.Service[int, int]) float64 {
		for range 100 { // warm the pools
			_, _ = troupe.Do(ctx, svc, 1)
		}
		return testing.AllocsPerRun(1000, func() { _, _ = troupe.Do(ctx, svc, 1) })
	}
	plain, err := four.Build(sys, echo)
	require.NoError(t, err)
	obs := &counting{}
	observed, err := four.Observe(obs, "p").Build(sys, echo)
	require.NoError(t, err)

	without, with := allocs(plain), allocs(observed)
	t.Logf("allocations per call: %v without an observer, %v with one", without, with)
	assert.LessOrEqual(t, without, 1.0, "no observer")
	assert.LessOrEqual(t, with, without, "a counting observer")
	assert.Equal(t, obs.n[troupe.EventAccepted].Load(), obs.n[troupe.EventFinished].Load())
	assert.Equal(t, obs.n[troupe.EventAccepted].Load(), 4*obs.n[troupe.EventStarted].Load(), "four stages, one downstream call")
	require.NoError(t, plain.Close(ctx))
	require.NoError(t, observed.Close(ctx))
}
