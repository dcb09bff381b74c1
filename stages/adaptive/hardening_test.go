package adaptive_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/stages/adaptive"
	"github.com/troupe-go/troupe/troupetest"
)

// spec: HR1, AL1
// A panic in Classify is the outcome of the call it judged, a
// *troupe.PanicError wrapping the call's error; the call is not counted,
// and the stage goes on.
func TestHR1_APanickingClassifierIsAnOutcome(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, h := overMock(t, 1, adaptive.Initial(10), adaptive.Classify(func(err error) bool {
			if errors.Is(err, errOverload) {
				panic("classifier bug")
			}
			return true
		}))
		ctx := context.Background()
		out := troupetest.Go(ctx, a, 1)
		h.Next(ctx).Fail(errOverload)
		err := (<-out).Err
		var pe *troupe.PanicError
		require.ErrorAs(t, err, &pe)
		assert.ErrorIs(t, err, troupe.ErrPanic)
		assert.ErrorIs(t, err, errOverload, "the call's error is kept")
		assert.Equal(t, "adaptive: Classify", pe.Where)
		assert.Equal(t, "classifier bug", pe.Value)
		assert.Equal(t, 10, a.Limit(), "not counted")

		out = troupetest.Go(ctx, a, 2)
		h.Next(ctx).Respond(2)
		assert.NoError(t, (<-out).Err, "the stage goes on")
		synctest.Wait()
		assert.Equal(t, 10, a.Available())
		require.NoError(t, a.Close(ctx))
	})
}

// spec: HR1, AL1
// A panic in OnLimitChange is the outcome of the call whose goroutine told
// it; the change stands, and later changes are told.
func TestHR1_APanickingCallbackIsAnOutcome(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var told atomic.Int32
		a, h := overMock(t, 1, adaptive.Initial(10), adaptive.OnLimitChange(func(old, new int) {
			if told.Add(1) == 2 { // the first is the end of the probe
				panic("callback bug")
			}
		}))
		ctx := context.Background()
		out := troupetest.Go(ctx, a, 1)
		h.Next(ctx).Fail(errOverload)
		err := (<-out).Err
		var pe *troupe.PanicError
		require.ErrorAs(t, err, &pe)
		assert.Equal(t, "adaptive: OnLimitChange", pe.Where)
		assert.ErrorIs(t, err, errOverload)
		assert.Equal(t, 9, a.Limit(), "the change stands")

		out = troupetest.Go(ctx, a, 2)
		h.Next(ctx).Fail(errOverload)
		assert.Equal(t, errOverload, (<-out).Err, "the next change is told, without a panic")
		assert.Equal(t, 8, a.Limit())
		assert.Equal(t, int32(3), told.Load())
		require.NoError(t, a.Close(ctx))
	})
}

// spec: HR1
// A panic in OnLimitChange when the limit grows after a success is that
// call's outcome: the success is lost to it, and the increase still
// takes effect.
func TestHR1_APanickingCallbackOnAnIncrease(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mock, h := troupetest.NewMock[int, int]()
		h.Allow(100)
		a, err := adaptive.New[int, int](troupetest.NewSystem(t), mock, adaptive.Samples(1), adaptive.Initial(1),
			adaptive.OnLimitChange(func(old, new int) { panic("told") }))
		require.NoError(t, err)
		ctx := context.Background()
		out := troupetest.Go(ctx, a, 1) // the probe at 1 ends where it started
		h.Next(ctx).Respond(1)
		require.NoError(t, (<-out).Err)
		require.Equal(t, 1, a.Limit())
		out = troupetest.Go(ctx, a, 2) // a window without a queue: grow
		h.Next(ctx).Respond(2)
		r := <-out
		assert.ErrorIs(t, r.Err, troupe.ErrPanic)
		assert.Zero(t, r.Value)
		assert.Equal(t, 2, a.Limit())
		require.NoError(t, a.Close(ctx))
	})
}
