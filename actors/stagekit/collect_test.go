package stagekit_test

import (
	"context"
	"runtime"
	"testing"
	"testing/synctest"
	"weak"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors/stagekit"
	"github.com/troupe-go/troupe/troupetest"
)

// Closed stages leave nothing behind in a host that lives on after spawning
// and closing many of them: not even their PIDs, which protoactor's
// children set kept in the slots its Remove leaves behind (half of them, in
// this test, before the host cleared those slots), nor the set itself: the
// host's supervisor actor, having spawned more than a thousand, is replaced
// once it has no children, and the new one supervises what comes next.
// spec: ACT5, SUP3
func TestACT5_ClosedStagesLeaveNothingInTheirHost(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sys := troupetest.NewSystem(t)
		f := stagekit.Func(func(_ context.Context, v int) (int, error) { return v, nil })
		const n = 1500
		first := stagekit.SupervisorPID(sys.ActorsHost())
		pids := make([]weak.Pointer[actor.PID], 0, n)
		stages := make([]*stagekit.Stage[int, int], 0, n)
		for range n {
			s := stage(t, sys, f, 4)
			stages = append(stages, s)
			pids = append(pids, weak.Make(stagekit.PIDOf(s)))
		}
		for _, s := range stages {
			require.NoError(t, s.Close(context.Background()))
		}
		clear(stages)
		synctest.Wait() // the old supervisor actor stops
		alive := n
		for range 10 { // the PIDs are plain garbage: a couple of cycles collect them
			runtime.GC()
			alive = 0
			for _, w := range pids {
				if w.Value() != nil {
					alive++
				}
			}
			if alive == 0 {
				break
			}
		}
		assert.Zero(t, alive, "PIDs of closed stages are still reachable")
		assert.NotEqual(t, first.Id, stagekit.SupervisorPID(sys.ActorsHost()).Id, "the host has a new supervisor actor")

		// The new supervisor actor governs new stages: a panic restarts the
		// stage, which goes on (testsys fails the test on any dead letter).
		mock, h := troupetest.NewMock[int, int]()
		s := stage(t, sys, mock, 4)
		reqA, a, b, c := panicScene(t, s, h)
		assert.ErrorIs(t, (<-b).Err, troupe.ErrRestarted)
		reqA.Respond(10)
		assert.Equal(t, troupetest.Result[int]{Value: 10}, <-a)
		h.Allow(1)
		reqC := h.Next(context.Background())
		reqC.Respond(30)
		assert.Equal(t, troupetest.Result[int]{Value: 30}, <-c)
	})
}
