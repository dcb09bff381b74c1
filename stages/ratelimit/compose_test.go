package ratelimit_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/stages/loadshed"
	"github.com/troupe-go/troupe/stages/ratelimit"
	"github.com/troupe-go/troupe/troupetest"
)

// spec: RL2, LS3
func TestLoadShedOutsideRateLimitShedsWhileLimited(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := newRecorder()
		st, err := troupe.NewBuilder[int, int]().
			Layer(loadshed.Layer[int, int]()).
			Layer(ratelimit.Layer[int, int](perSecond(2))).
			Build(troupetest.NewSystem(t), rec.service())
		require.NoError(t, err)
		ctx := context.Background()
		for i := range 2 {
			require.NoError(t, (<-troupetest.Go[int, int](ctx, st, i)).Err)
		}
		waiting := troupetest.Go[int, int](ctx, st, 2) // finds the rate limit not ready: waits in LoadShed's slot
		synctest.Wait()
		for i := range 3 {
			r := <-troupetest.Go[int, int](ctx, st, 3+i)
			assert.ErrorIs(t, r.Err, loadshed.ErrOverloaded, "Limited: not ready, so shed")
		}
		assert.Equal(t, time.Duration(0), rec.since(), "shed at once")
		require.NoError(t, (<-waiting).Err)
		assert.Equal(t, durations(ms, 0, 0, 1000), rec.times(), "the waiting call went in the next window; the shed ones never reached the service")
	})
}
