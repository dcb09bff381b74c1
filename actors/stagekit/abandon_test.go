package stagekit_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors/stagekit"
	"github.com/troupe-go/troupe/troupetest"
)

// waitsForCtx is a downstream that works until its context ends.
func waitsForCtx(started chan<- struct{}) *stagekit.FuncService[int, int] {
	return stagekit.Func(func(ctx context.Context, _ int) (int, error) {
		started <- struct{}{}
		<-ctx.Done()
		return 0, ctx.Err()
	})
}

// spec: HR2, ACT5
func TestHR2_CloseAbandonsRunningCallsWhenItsContextEnds(t *testing.T) {
	for _, hold := range []bool{true, false} { // a limit, a buffer
		name := map[bool]string{true: "limit", false: "buffer"}[hold]
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				sys := stagekit.NewSystem()
				started := make(chan struct{}, 1)
				s, err := stagekit.Spawn(sys, stagekit.Config{Name: name, Capacity: 4, HoldUntilOutcome: hold},
					waitsForCtx(started), stagekit.Passthrough[int, int]{})
				require.NoError(t, err)
				out := troupetest.Go(context.Background(), s, 1)
				<-started
				t0 := time.Now()
				ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
				defer cancel()
				err = sys.Shutdown(ctx)
				require.Error(t, err, "Shutdown must not say nil while a caller still waits")
				assert.ErrorIs(t, err, troupe.ErrClosed)
				assert.ErrorIs(t, err, context.DeadlineExceeded)
				var ab *troupe.AbandonedError
				require.ErrorAs(t, err, &ab)
				assert.Equal(t, int64(1), ab.Calls)
				r := <-out
				assert.Equal(t, 500*time.Millisecond, time.Since(t0), "the caller is answered when Close gives up")
				assert.ErrorIs(t, r.Err, troupe.ErrClosed, "the work's context was cancelled with the close error")
			})
		})
	}
}

// spec: HR2
func TestHR2_CloseWaitsForRunningCallsThatFinishInTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sys := stagekit.NewSystem()
		api := stagekit.Func(func(ctx context.Context, v int) (int, error) {
			time.Sleep(200 * time.Millisecond) // the work itself takes 200 ms
			return v * 2, nil
		})
		s, err := stagekit.Spawn(sys, stagekit.Config{Name: "buffer", Capacity: 4}, api, stagekit.Passthrough[int, int]{})
		require.NoError(t, err)
		out := troupetest.Go(context.Background(), s, 21)
		synctest.Wait()
		t0 := time.Now()
		require.NoError(t, s.Close(context.Background()), "drained")
		assert.Equal(t, 200*time.Millisecond, time.Since(t0), "Close returned when the last call had its outcome")
		assert.Equal(t, troupetest.Result[int]{Value: 42}, <-out)
		require.NoError(t, sys.Shutdown(context.Background()))
	})
}
