package ratelimit_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/stages/ratelimit"
	"github.com/troupe-go/troupe/troupetest"
)

// itself is the cost of a request: its value.
func itself(v int) int { return v }

// A request takes its cost in units at once: a cost above the burst is a
// *CostError at once, one the bucket holds goes now, and one it does not
// waits until it does (x/time/rate's TestWaitSimple: 10 a second, a burst
// of 3; WaitN of 4 fails, of 2 acts now, of 3 acts 200 ms later).
//
// spec: PP2
func TestCostTakesItsUnitsAtOnceAndACostAboveTheBurstIsAnError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := newRecorder()
		rl := newRL(t, rec.service(), perSecond(10), ratelimit.Smooth(3), ratelimit.Cost(itself))
		ctx := context.Background()
		r := <-troupetest.Go(ctx, rl, 4)
		var ce *ratelimit.CostError
		require.ErrorAs(t, r.Err, &ce)
		assert.Equal(t, ratelimit.CostError{Cost: 4, Max: 3}, *ce)
		assert.ErrorIs(t, r.Err, ratelimit.ErrCost)
		allOK(t, startInOrder(ctx, rl, 2, 3))
		assert.Equal(t, durations(ms, 0, 200), rec.times())

		r = <-troupetest.Go(ctx, rl, 0)
		assert.ErrorIs(t, r.Err, ratelimit.ErrCost, "a cost below 1")
		assert.Empty(t, rec.times()[2:], "spending nothing")
	})
}

// A request whose units would come after its deadline is refused at once
// (x/time/rate's TestWaitTimeout: with a deadline of 100 ms, WaitN of 2
// acts now and WaitN of 3, whose units come at 200 ms, fails at once).
//
// spec: PP2
func TestCostBeyondTheDeadlineIsRefusedAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := newRecorder()
		rl := newRL(t, rec.service(), perSecond(10), ratelimit.Smooth(3), ratelimit.Cost(itself))
		ctx, cancel := context.WithTimeout(context.Background(), 100*ms)
		defer cancel()
		assert.Equal(t, troupetest.Result[int]{Value: 2}, <-troupetest.Go(ctx, rl, 2))
		r := <-troupetest.Go(ctx, rl, 3)
		assert.ErrorIs(t, r.Err, ratelimit.ErrLimited)
		assert.ErrorIs(t, r.Err, context.DeadlineExceeded)
		assert.Equal(t, time.Duration(0), rec.since(), "refused at once")
	})
}

// In the fixed window a request waits for a window with its cost left.
//
// spec: PP2
func TestCostInTheWindowWaitsForAWindowWithItsUnits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := newRecorder()
		rl := newRL(t, rec.service(), perSecond(3), ratelimit.Cost(itself))
		ctx := context.Background()
		allOK(t, startInOrder(ctx, rl, 2, 2, 1))
		assert.Equal(t, durations(ms, 0, 1000, 1000), rec.times())
	})
}

func TestCostOfAnotherTypeIsBadConfig(t *testing.T) {
	f := actors.Func(func(_ context.Context, v int) (int, error) { return v, nil })
	_, err := ratelimit.New[int, int](nil, f, perSecond(1), ratelimit.Cost(func(string) int { return 1 }))
	troupetest.BadOption(t, err, "ratelimit", "Cost")
	_, err = ratelimit.New[int, int](nil, f, perSecond(1), ratelimit.Cost[int](nil))
	troupetest.BadOption(t, err, "ratelimit", "Cost")
}
