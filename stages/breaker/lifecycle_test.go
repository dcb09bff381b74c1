package breaker_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/stages/breaker"
	"github.com/troupe-go/troupe/troupetest"
)

// closing runs br.Close(ctx) on a goroutine and returns its result.
func closing(ctx context.Context, br troupe.Closer) <-chan error {
	ch := make(chan error, 1)
	go func() { ch <- br.Close(ctx) }()
	return ch
}

// Close drains: the call in flight gets its response, then Close returns
// nil; from then on reserving fails with ErrClosed.
//
// spec: HR2, ACT5, CORE6
func TestHR2_CloseDrainsTheCallsInFlight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		br, h := overMock(t)
		ctx := context.Background()
		c := troupetest.Go[int, int](ctx, br, 1)
		req := h.Next(ctx)
		done := closing(ctx, br)
		synctest.Wait()
		require.Empty(t, done, "Close waits for the call in flight")
		_, err := br.Reserve(ctx)
		assert.ErrorIs(t, err, troupe.ErrClosed)
		req.Respond(10)
		assert.Equal(t, troupetest.Result[int]{Value: 10}, <-c)
		assert.NoError(t, <-done)
	})
}

// An outcome the breaker keeps for OnStateChange is drained too: Close
// waits for the callback, and the call gets its outcome.
//
// spec: HR2, CB3
func TestHR2_CloseWaitsForTheCallbackOfTheCallThatMadeAChange(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		br, _ := overFake(t, breaker.CountWindow(1), breaker.OnStateChange(func(_, _ breaker.State) { <-release }))
		ctx := context.Background()
		c := troupetest.Go[step, int](ctx, br, fail)
		synctest.Wait()
		done := closing(ctx, br)
		synctest.Wait()
		require.Empty(t, done)
		close(release)
		assert.ErrorIs(t, (<-c).Err, errDown)
		assert.NoError(t, <-done)
	})
}

// When Close's context ends first, the call still running is abandoned:
// its work is told to stop, its caller gets ErrClosed, and Close says
// what it abandoned. An open breaker's timer goes with the stage.
//
// spec: HR2, ACT5
func TestHR2_CloseAbandonsWhatItCannotDrain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		br, h := overMock(t, breaker.CountWindow(2), breaker.MinCalls(1), breaker.OpenDelay(time.Hour))
		ctx := context.Background()
		c := troupetest.Go[int, int](ctx, br, 1)
		h.Next(ctx).Fail(errDown)
		require.ErrorIs(t, (<-c).Err, errDown)
		require.Equal(t, open, br.State())

		c = troupetest.Go[int, int](ctx, br, 2)
		synctest.Wait()
		require.ErrorIs(t, (<-c).Err, breaker.ErrOpen)
		cctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		assert.NoError(t, br.Close(cctx), "an open breaker holds no call")

		br, h = overMock(t)
		c = troupetest.Go[int, int](ctx, br, 3)
		req := h.Next(ctx)
		start := time.Now()
		err := br.Close(cctx)
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		var ae *troupe.AbandonedError
		require.ErrorAs(t, err, &ae)
		assert.Equal(t, int64(1), ae.Calls)
		assert.Equal(t, time.Second, time.Since(start))
		assert.ErrorIs(t, (<-c).Err, troupe.ErrClosed)
		assert.ErrorIs(t, context.Cause(req.Ctx), troupe.ErrClosed, "its work was told to stop")
	})
}
