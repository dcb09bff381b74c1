package stages_test

import (
	"context"
	"runtime"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/stages"
	"github.com/troupe-go/troupe/stages/timeout"
	"github.com/troupe-go/troupe/troupetest"
)

// derived makes n contexts from ctx the way an HTTP or gRPC client does
// for each call, and returns how many goroutines that started, with a
// function that cancels them.
func derived(ctx context.Context, n int) (started int, cancel func()) {
	cancels := make([]context.CancelFunc, n)
	before := runtime.NumGoroutine()
	for i := range cancels {
		_, cancels[i] = context.WithCancel(ctx)
	}
	started = runtime.NumGoroutine() - before
	return started, func() {
		for _, c := range cancels {
			c()
		}
	}
}

// A context derived from the one a call's work gets follows it without a
// goroutine of its own: the work's and the timeout's contexts implement
// the context package's AfterFunc hook. 200 derived contexts started about
// 200 goroutines before.
//
// spec: HR2
func TestHR2_AContextDerivedFromTheWorksStartsNoGoroutine(t *testing.T) {
	for _, tc := range []struct {
		name  string
		stack stages.Builder[int, int]
	}{
		{"limit", stages.Stack[int, int]().Limit(1)},
		{"timeout", stages.Stack[int, int]().Timeout(10 * time.Second)},
		{"limit-timeout", stages.Stack[int, int]().Limit(1).Timeout(10 * time.Second)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sys := troupetest.NewSystem(t)
			var started int
			st, err := tc.stack.Build(sys, actors.Func(func(ctx context.Context, v int) (int, error) {
				n, cancel := derived(ctx, 200)
				started = n
				cancel()
				return v, nil
			}))
			require.NoError(t, err)
			_, err = troupe.Do(context.Background(), st, 1)
			require.NoError(t, err)
			assert.Less(t, started, 50, "goroutines started by 200 derived contexts")
			require.NoError(t, st.Close(context.Background()))
		})
	}
}

// Derived contexts are cancelled with the work's: when a timeout fires,
// and when a Close gives up on the call.
//
// spec: HR2, T3
func TestHR2_AContextDerivedFromTheWorksIsCancelledWithIt(t *testing.T) {
	waitDerived := actors.Func(func(ctx context.Context, v int) (int, error) {
		d, cancel := context.WithCancel(ctx)
		defer cancel()
		<-d.Done()
		return 0, d.Err()
	})
	t.Run("timeout", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			sys := troupetest.NewSystem(t)
			st, err := stages.Stack[int, int]().Timeout(time.Second).Build(sys, waitDerived)
			require.NoError(t, err)
			t0 := time.Now()
			_, err = troupe.Do(context.Background(), st, 1)
			assert.ErrorIs(t, err, timeout.ErrTimeout)
			assert.Equal(t, time.Second+time.Nanosecond, time.Since(t0))
			require.NoError(t, st.Close(context.Background()))
		})
	})
	t.Run("close", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			sys := troupetest.NewSystem(t)
			st, err := stages.Stack[int, int]().Limit(1).Build(sys, waitDerived)
			require.NoError(t, err)
			out := troupetest.Go(context.Background(), st, 1)
			synctest.Wait()
			ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
			defer cancel()
			assert.ErrorIs(t, st.Close(ctx), troupe.ErrClosed)
			r := <-out
			assert.ErrorIs(t, r.Err, troupe.ErrClosed, "the derived context ended with the work's")
		})
	})
}
