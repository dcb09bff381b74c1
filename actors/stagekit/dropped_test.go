package stagekit_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors/stagekit"
	"github.com/troupe-go/troupe/troupetest"
)

// dropOne reserves a permit and drops it.
//
//go:noinline
func dropOne(t *testing.T, s *stagekit.Stage[int, int]) {
	p, err := s.Reserve(context.Background())
	require.NoError(t, err)
	_ = p
}

// Real time, not synctest: the garbage collector's cleanups run outside any
// bubble. The bound is what the test checks; the old behaviour (waiting for
// the runtime's forced collection, 2 minutes) hits the 10 s context.
//
// spec: HR6, CORE4
func TestHR6_DroppedPermitComesBackWithinTheBoundOfSomeoneWaiting(t *testing.T) {
	troupetest.ExpectDropped(1)
	var logs troupetest.Log
	sys := stagekit.NewSystem(stagekit.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))),
		stagekit.WithDroppedPermitCheck(200*time.Millisecond))
	defer func() { require.NoError(t, sys.Shutdown(context.Background())) }()
	api := stagekit.Func(func(_ context.Context, v int) (int, error) { return v, nil })
	s, err := stagekit.Spawn(sys, stagekit.Config{Name: "limit-1", Capacity: 1}, api, stagekit.Passthrough[int, int]{})
	require.NoError(t, err)
	before := troupe.LeakedPermits()

	dropOne(t, s)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	t0 := time.Now()
	p, err := s.Reserve(ctx)
	waited := time.Since(t0)
	require.NoError(t, err, "the dropped permit's slot never came back")
	require.NoError(t, p.Release())
	assert.Less(t, waited, 3*time.Second, "within the check's 200 ms plus a collection")
	assert.Equal(t, before+1, troupe.LeakedPermits())
	assert.Contains(t, logs.String(), "stage=limit-1", "the warning went through the system's logger, naming the stage, before the slot came back")
	t.Logf("waited %v for the dropped permit's slot", waited)
}
