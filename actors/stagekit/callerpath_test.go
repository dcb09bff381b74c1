package stagekit_test

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors/stagekit"
	"github.com/troupe-go/troupe/troupetest"
)

// takenCounter is a pass-through behaviour that counts the requests its actor
// takes.
type takenCounter struct {
	stagekit.Passthrough[int, int]
	taken atomic.Int32
}

func (c *takenCounter) Request(s *stagekit.Stage[int, int], e *stagekit.Envelope[int, int]) {
	c.taken.Add(1)
	s.Forward(e)
}

// A stage that forwards every request as it is (Config.CallerPath) is
// crossed on the caller's goroutine while it is in its ordinary state: the
// request never enters its actor. When the inner service is not ready the
// request takes the actor's path (which parks it), and so do the requests
// behind it, in order, until it has gone.
//
// spec: PT1, ACT2, ACT3
func TestAStageInItsOrdinaryStateIsCrossedOnTheCallersGoroutine(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sys := troupetest.NewSystem(t)
		inner, err := stagekit.Spawn[int, int](sys, stagekit.Config{Name: "inner", Capacity: 1, HoldUntilOutcome: true, CallerPath: true},
			stagekit.Func(func(_ context.Context, v int) (int, error) { return v, nil }), &takenCounter{})
		require.NoError(t, err)
		beh := &takenCounter{}
		outer, err := stagekit.Spawn[int, int](sys, stagekit.Config{Name: "outer", CallerPath: true}, inner, beh)
		require.NoError(t, err)

		for i := range 3 {
			v, err := troupe.Do(context.Background(), outer, i)
			require.NoError(t, err)
			assert.Equal(t, i, v)
		}
		assert.Zero(t, beh.taken.Load(), "in its ordinary state the stage's actor takes no request")

		// The inner stage full: the next request waits, parked by the outer
		// stage's actor; the one after it is queued behind, in order.
		p, err := inner.Reserve(context.Background()) // take the inner stage's one slot
		require.NoError(t, err)
		var got [2]int
		done := make(chan struct{}, 2)
		for i := range 2 {
			go func() {
				v, err := troupe.Do(context.Background(), outer, 10+i)
				assert.NoError(t, err)
				got[i] = v
				done <- struct{}{}
			}()
			synctest.Wait()
		}
		assert.EqualValues(t, 1, beh.taken.Load(), "the first waits in the actor, the second behind it in the mailbox")
		require.NoError(t, p.Release())
		<-done
		<-done
		assert.Equal(t, [2]int{10, 11}, got)
		assert.EqualValues(t, 2, beh.taken.Load())

		v, err := troupe.Do(context.Background(), outer, 5)
		require.NoError(t, err)
		assert.Equal(t, 5, v)
		assert.EqualValues(t, 2, beh.taken.Load(), "back in its ordinary state: the caller's path again")
		require.NoError(t, outer.Close(context.Background()))
		require.NoError(t, inner.Close(context.Background()))
	})
}
