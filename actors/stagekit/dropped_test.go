package stagekit_test

import (
	"context"
	"log/slog"
	"runtime"
	"sync"
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
// spec: HR6, CORE4, EG8
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
	collections := stagekit.ForcedCollections()

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
	if waited >= 200*time.Millisecond { // sooner, a collection of the runtime's own found the permit first
		assert.Greater(t, stagekit.ForcedCollections(), collections, "the check collected: a permit was out")
	}
	assert.Contains(t, logs.String(), "stage=limit-1", "the warning went through the system's logger, naming the stage, before the slot came back")
	t.Logf("waited %v for the dropped permit's slot", waited)
}

// holdThenDrop reserves a permit, holds it until drop is closed, then
// drops it.
//
//go:noinline
func holdThenDrop(t *testing.T, s *stagekit.Stage[int, int], held chan<- struct{}, drop <-chan struct{}) {
	p, err := s.Reserve(context.Background())
	require.NoError(t, err)
	close(held)
	<-drop
	runtime.KeepAlive(p)
}

// A caller that began to wait while the permit was still in its user's
// hands (the check it made then found nothing to reclaim) still gets the
// slot once the permit is dropped: its check repeats while it waits, and
// so do a Reserve's and a ReserveAndCall's.
//
// spec: HR6
func TestADroppedPermitComesBackToACallerThatWasWaitingBeforeTheDrop(t *testing.T) {
	for _, how := range []string{"Reserve", "ReserveAndCall"} {
		t.Run(how, func(t *testing.T) {
			troupetest.ExpectDropped(1)
			const d = 100 * time.Millisecond
			sys := stagekit.NewSystem(stagekit.WithLogger(slog.New(slog.DiscardHandler)), stagekit.WithDroppedPermitCheck(d))
			defer func() { require.NoError(t, sys.Shutdown(context.Background())) }()
			api := stagekit.Func(func(_ context.Context, v int) (int, error) { return v, nil })
			s, err := stagekit.Spawn(sys, stagekit.Config{Name: "limit-1", Capacity: 1}, api, stagekit.Passthrough[int, int]{})
			require.NoError(t, err)
			before := troupe.LeakedPermits()
			collections := stagekit.ForcedCollections()

			held, drop, dropped := make(chan struct{}), make(chan struct{}), make(chan struct{})
			go func() {
				defer close(dropped)
				holdThenDrop(t, s, held, drop)
			}()
			<-held
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			got := make(chan error, 1)
			go func() {
				if how == "Reserve" {
					p, err := s.Reserve(ctx)
					if err == nil {
						err = p.Release()
					}
					got <- err
					return
				}
				_, err := s.ReserveAndCall(ctx, 1)
				got <- err
			}()
			// The waiting caller's check collects once with the permit still
			// held (nothing to reclaim); only then is it dropped.
			for stagekit.ForcedCollections() == collections {
				time.Sleep(time.Millisecond) // polls a condition; no order depends on the sleep
			}
			runtime.GC() // returns once that collection is over too
			close(drop)
			<-dropped
			t0 := time.Now()
			require.NoError(t, <-got, "the dropped permit's slot never came back to the caller waiting for it")
			waited := time.Since(t0)
			assert.Less(t, waited, 5*time.Second, "within two checks of 100 ms plus a collection")
			assert.Equal(t, before+1, troupe.LeakedPermits())
			t.Logf("waited %v after the drop", waited)
		})
	}
}

// A permit that was used leaves nothing to reclaim: the stage's waiting
// callers force no collection, however long they wait.
//
// spec: EG8
func TestASaturatedStageThatLeakedNoPermitForcesNoCollection(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sys := troupetest.NewSystem(t)
		api := stagekit.Func(func(_ context.Context, v int) (int, error) {
			time.Sleep(100 * time.Millisecond)
			return v, nil
		})
		s, err := stagekit.Spawn(sys, stagekit.Config{Name: "limit", Capacity: 2, HoldUntilOutcome: true}, api, stagekit.Passthrough[int, int]{})
		require.NoError(t, err)
		p, err := s.Reserve(context.Background())
		require.NoError(t, err)
		require.NoError(t, p.Release()) // the stage has issued a permit
		before := stagekit.ForcedCollections()

		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		var calls atomic.Int64
		var wg sync.WaitGroup
		for i := range 64 {
			wg.Go(func() {
				for ctx.Err() == nil {
					if _, err := troupe.Do(ctx, s, i); err == nil {
						calls.Add(1)
					}
				}
			})
		}
		wg.Wait()
		assert.Greater(t, calls.Load(), int64(150), "the stage was saturated: 2 at a time for 10 s, each caller waiting about 3 s a call")
		assert.Equal(t, before, stagekit.ForcedCollections(), "no collection was forced")
		require.NoError(t, s.Close(context.Background()))
	})
}
