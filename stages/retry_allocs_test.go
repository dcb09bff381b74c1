package stages_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/stages"
	"github.com/troupe-go/troupe/stages/ratelimit"
	"github.com/troupe-go/troupe/troupetest"
)

// A retry without a wait goes on at once, without watching the caller's
// context (asking a timeout's context for Done makes its channel, and the
// watch allocates too): a call whose first attempt fails costs the
// 4-stage stack three allocations (the timeout's call context, the
// retry's copy of the request, and the retry's context carrying its
// number for troupe.AttemptFrom), where it cost eight.
//
// spec: RT6
func TestRT6_ARetryWithoutAWaitAllocatesNoWatch(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("measures allocations")
	}
	sys := troupetest.NewSystem(t)
	ctx := context.Background()
	var n atomic.Int64
	firstFails := actors.Func(func(_ context.Context, v int) (int, error) {
		if n.Add(1)%2 == 1 {
			return 0, errFlaky
		}
		return v, nil
	})
	st, err := stages.Stack[int, int]().Limit(20).Timeout(10*time.Second).Retry(3, nil).
		RateLimit(ratelimit.Rate{Num: 1_000_000_000, Per: time.Second}).Build(sys, firstFails)
	if err != nil {
		t.Fatal(err)
	}
	for range 100 { // warm the pools
		_, _ = troupe.Do(ctx, st, 1)
	}
	allocs := testing.AllocsPerRun(1000, func() {
		if _, err := troupe.Do(ctx, st, 1); err != nil {
			t.Fatal(err)
		}
	})
	assert.LessOrEqual(t, allocs, 3.0)
	assert.Equal(t, int64(2*(100+1001)), n.Load(), "every call retried once")
	_ = st.Close(ctx)
}
