package buffer_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/troupetest"
)

// spec: EG4
func TestABrokenBufferClosesOnceTheCallsItHandedOnFinish(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, h := newBuffer(t, troupetest.NewSystem(t), 4)
		ctx := context.Background()
		h.Allow(1)
		a := troupetest.Go(ctx, b, "a")
		reqA := h.Next(ctx)
		h.Break(nil)
		_, err := troupe.Do(ctx, b, "b") // finds the inner service broken
		require.ErrorIs(t, err, troupetest.ErrBroken)

		closed := make(chan error, 1)
		go func() { closed <- b.Close(ctx) }()
		synctest.Wait()
		select {
		case err := <-closed:
			t.Fatalf("Close returned while a call it had handed on still ran: %v", err)
		default:
		}
		reqA.Respond("A")
		assert.Equal(t, troupetest.Result[string]{Value: "A"}, <-a)
		assert.NoError(t, <-closed, "everything drained")

		// Close's context ends first: the call's work is abandoned.
		b, h = newBuffer(t, troupetest.NewSystem(t), 4)
		h.Allow(1)
		a = troupetest.Go(ctx, b, "a")
		reqA = h.Next(ctx)
		h.Break(nil)
		_, err = troupe.Do(ctx, b, "b")
		require.ErrorIs(t, err, troupetest.ErrBroken)
		cctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		err = b.Close(cctx)
		var ab *troupe.AbandonedError
		require.ErrorAs(t, err, &ab)
		assert.EqualValues(t, 1, ab.Calls)
		r := <-a
		assert.ErrorIs(t, r.Err, troupe.ErrClosed, "the abandoned call")
		assert.ErrorIs(t, r.Err, troupetest.ErrBroken, "says why the buffer closed")
		assert.Error(t, reqA.Ctx.Err())
	})
}
