package ratelimit_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/stages/ratelimit"
	"github.com/troupe-go/troupe/troupetest"
)

// A reservation that never waits: while the rate is spent, TryReserve
// refuses at once with a *LimitedError saying when the next unit comes
// (failsafe-go's rate limiter TryAcquirePermit; ErrLimited, and
// troupe.ErrFull), and takes a unit again once it has come.
//
// spec: PP2
func TestTryReserveRefusesAtOnceWithTheWaitForTheNextUnit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		api := actors.Func(func(_ context.Context, v int) (int, error) { return v, nil })
		rl, err := ratelimit.New[int, int](troupetest.NewSystem(t), api, ratelimit.Rate{Num: 2, Per: time.Second})
		require.NoError(t, err)
		for v := range 2 {
			p, err := rl.TryReserve()
			require.NoError(t, err)
			_, err = p.Call(ctx, v)
			require.NoError(t, err)
		}
		synctest.Wait()
		time.Sleep(300 * time.Millisecond) // the bubble's clock: 700ms of the window left
		_, err = rl.TryReserve()
		var le *ratelimit.LimitedError
		require.ErrorAs(t, err, &le)
		assert.Equal(t, 700*time.Millisecond, le.RetryAfter)
		assert.ErrorIs(t, err, ratelimit.ErrLimited)
		assert.ErrorIs(t, err, troupe.ErrFull)

		time.Sleep(le.RetryAfter)
		synctest.Wait()
		p, err := rl.TryReserve()
		require.NoError(t, err, "the next window's unit")
		v, err := p.Call(ctx, 5)
		assert.NoError(t, err)
		assert.Equal(t, 5, v)
		require.NoError(t, rl.Close(ctx))
		_, err = rl.TryReserve()
		assert.True(t, errors.Is(err, troupe.ErrClosed), "closed: %v", err)
	})
}
