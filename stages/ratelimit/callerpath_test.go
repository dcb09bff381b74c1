package ratelimit

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors/stagekit"
	"github.com/troupe-go/troupe/troupetest"
)

// A limiter spares a unit only when one is left after it: the last unit
// of a window or of a burst is not spared.
//
// spec: PT1, RL2, RL4
func TestALimiterSparesAUnitOnlyWhenOneIsLeftAfterIt(t *testing.T) {
	w := newWindow(Rate{Num: 3, Per: time.Second})
	assert.True(t, w.takeSpare(t0))
	assert.True(t, w.takeSpare(t0))
	assert.False(t, w.takeSpare(t0), "the last unit of the window")
	assert.Equal(t, 1, w.rem, "nothing spent")
	require.True(t, w.take(t0))
	assert.False(t, w.takeSpare(at(999*ms)))
	assert.True(t, w.takeSpare(at(time.Second)), "a new window")
	assert.Equal(t, 2, w.rem)

	g := newGCRA(Rate{Num: 5, Per: time.Second}, 3)
	assert.True(t, g.takeSpare(t0))
	assert.True(t, g.takeSpare(t0))
	assert.False(t, g.takeSpare(t0), "the last unit of the burst")
	assert.Equal(t, 1, g.remaining(t0), "nothing spent")
	require.True(t, g.take(t0))
	assert.False(t, g.takeSpare(at(200*ms)), "one unit back: the last again")
	assert.True(t, g.takeSpare(at(400*ms)), "two back")
	assert.Equal(t, 1, g.remaining(at(400*ms)))

	one := newGCRA(Rate{Num: 5, Per: time.Second}, 1)
	assert.False(t, one.takeSpare(t0), "a burst of one has never a unit to spare")
}

// actorCounter counts the requests the stage's actor takes.
type actorCounter struct {
	*behavior[int, int]
	taken atomic.Int32
}

func (c *actorCounter) Request(s *stagekit.Stage[int, int], e *stagekit.Envelope[int, int]) {
	c.taken.Add(1)
	c.behavior.Request(s, e)
}

// While units are left after it, a request crosses the rate limit on its
// caller's goroutine, spending its unit there; the last unit of a window
// is spent by the actor, which goes Limited, holds the next request until
// the window ends, and then lets callers cross on their goroutines again.
//
// spec: PT1, RL2
func TestARateLimitWithUnitsToSpareIsCrossedOnTheCallersGoroutine(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sys := troupetest.NewSystem(t)
		beh := &actorCounter{behavior: newBehavior[int, int](newWindow(Rate{Num: 3, Per: time.Second}))}
		st, err := stagekit.Spawn[int, int](sys, stagekit.Config{Name: "ratelimit", CallerPath: true},
			stagekit.Func(func(_ context.Context, v int) (int, error) { return v, nil }), beh)
		require.NoError(t, err)
		beh.attach(st)
		rl := stagekit.NewHandle(st, nil)
		call := func(v int) {
			t.Helper()
			got, err := troupe.Do(context.Background(), rl, v)
			require.NoError(t, err)
			require.Equal(t, v, got)
		}
		start := time.Now()
		call(1)
		call(2)
		assert.Zero(t, beh.taken.Load(), "two units spared: the caller's path")
		call(3)
		assert.EqualValues(t, 1, beh.taken.Load(), "the last unit: the actor's")
		assert.True(t, beh.isLimited())
		call(4)
		assert.EqualValues(t, 2, beh.taken.Load())
		assert.Equal(t, time.Second, time.Since(start), "held until the window ended")
		call(5)
		assert.EqualValues(t, 2, beh.taken.Load(), "units to spare again: the caller's path")
		require.NoError(t, rl.Close(context.Background()))
	})
}
