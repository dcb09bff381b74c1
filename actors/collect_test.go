package actors_test

import (
	"context"
	"runtime"
	"testing"
	"weak"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/internal/testsys"
)

// Closed stages leave nothing behind in a host that lives on after spawning
// and closing many of them: not even their PIDs, which protoactor's
// children set kept in the slots its Remove leaves behind (half of them, in
// this test, before the host cleared those slots).
// spec: ACT5
func TestACT5_ClosedStagesLeaveNothingInTheirHost(t *testing.T) {
	sys := testsys.New(t)
	f := actors.Func(func(_ context.Context, v int) (int, error) { return v, nil })
	const n = 1000
	pids := make([]weak.Pointer[actor.PID], 0, n)
	stages := make([]*actors.Stage[int, int], 0, n)
	for range n {
		s := stage(t, sys, f, 4)
		stages = append(stages, s)
		pids = append(pids, weak.Make(s.PID()))
	}
	for _, s := range stages {
		require.NoError(t, s.Close(context.Background()))
	}
	clear(stages)
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
}
