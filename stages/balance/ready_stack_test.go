package balance_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/stages"
	"github.com/troupe-go/troupe/troupetest"
)

// An endpoint that is a stack with no stages over a FuncService keeps its
// ready permit at every pick, as the FuncService itself does: a second
// Reserve right after the first, with a context already done, finds it
// ready (were its watcher woken at each pick instead, the second would
// find none ready until the watcher ran).
//
// spec: BAL1
func TestAStackWithNoStagesOverAFuncStaysReadyAtEveryPick(t *testing.T) {
	sys := troupetest.NewSystem(t)
	var c counted
	svc, err := stages.Stack[int, int]().Build(sys, c.svc())
	require.NoError(t, err)
	bal := newBalancer(t, map[string]troupe.Service[int, int]{"a": svc})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for range 200 {
		p1, err := bal.Reserve(ctx)
		require.NoError(t, err)
		p2, err := bal.Reserve(ctx)
		require.NoError(t, err, "the endpoint is still ready")
		require.NoError(t, p1.Release())
		require.NoError(t, p2.Release())
	}
	require.True(t, stats(bal)["a"].Ready)
}
