package limit_test

import (
	"context"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe/troupetest"
)

// A limit raised while the stack runs lets those waiting go at once, first
// come first served; one lowered takes back no permit held: the calls in
// flight finish, and new ones wait until fewer than the new limit are in
// flight (x/time/rate's TestReserveSetBurst: the units held are kept, the
// new size counts from then on).
//
// spec: PP2
func TestSetCapacityWakesWaitersAndKeepsPermitsHeld(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l, h := overMock(t, 1)
		ctx := context.Background()
		h.Allow(10)
		a := troupetest.Go(ctx, l, 1)
		ra := h.Next(ctx)
		b := troupetest.Go(ctx, l, 2)
		synctest.Wait()
		c := troupetest.Go(ctx, l, 3)
		synctest.Wait()
		assert.Equal(t, 2, l.Stats().Waiting)

		require.NoError(t, l.SetCapacity(3))
		rb, rc := h.Next(ctx), h.Next(ctx)
		assert.ElementsMatch(t, []int{2, 3}, []int{rb.Value, rc.Value}, "both waiters went")
		assert.Equal(t, 3, l.Stats().Capacity)

		require.NoError(t, l.SetCapacity(1))
		assert.Equal(t, -2, l.Available(), "three in flight over a limit of one: none taken back")
		d := troupetest.Go(ctx, l, 4)
		synctest.Wait()
		assert.Equal(t, 1, l.Stats().Waiting)
		ra.Respond(1)
		rb.Respond(2)
		synctest.Wait()
		assert.Zero(t, h.TryNext(), "one still in flight: the fourth waits")
		rc.Respond(3)
		rd := h.Next(ctx)
		assert.Equal(t, 4, rd.Value)
		rd.Respond(4)
		for _, ch := range []<-chan troupetest.Result[int]{a, b, c, d} {
			assert.NoError(t, (<-ch).Err)
		}
		synctest.Wait()
		assert.Equal(t, 1, l.Available())
	})
}

func TestSetCapacityRefusesABadLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l, _ := overMock(t, 2)
		troupetest.BadOption(t, l.SetCapacity(0), "limit", "SetCapacity")
		troupetest.BadOption(t, l.SetCapacity(1<<31), "limit", "SetCapacity")
		assert.Equal(t, 2, l.Available(), "unchanged")
	})
}
