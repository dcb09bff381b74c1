package ratelimit_test

import (
	"context"
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

// startInOrder starts one call per value, in order, each begun once the one
// before it waits in the stage.
func startInOrder(ctx context.Context, s troupe.Service[int, int], vs ...int) []<-chan troupetest.Result[int] {
	out := make([]<-chan troupetest.Result[int], len(vs))
	for i, v := range vs {
		out[i] = troupetest.Go(ctx, s, v)
		synctest.Wait()
	}
	return out
}

func allOK(t *testing.T, chs []<-chan troupetest.Result[int]) {
	t.Helper()
	for _, ch := range chs {
		assert.NoError(t, (<-ch).Err)
	}
}

// A faster rate set while callers wait keeps what the old rate gave up to
// then and refills at the new one from then: 5 a second with a burst of 2
// (200 ms apart), the two first go at once and the third at 200 ms; the
// rate doubled at 200 ms owes the fourth half a unit at 100 ms a unit, so
// it goes at 300 ms and the fifth at 400 ms (x/time/rate's
// TestReserveSetLimit).
//
// spec: PP2
func TestSetRateKeepsWhatTheOldRateGaveAndRefillsAtTheNewOne(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := newRecorder()
		rl := newRL(t, rec.service(), perSecond(5), ratelimit.Smooth(2))
		ctx := context.Background()
		first := startInOrder(ctx, rl, 0, 1, 2)
		allOK(t, first[:2])
		time.Sleep(200 * ms)
		allOK(t, first[2:])
		require.NoError(t, rl.SetRate(perSecond(10)))
		assert.Equal(t, perSecond(10), rl.Rate())
		allOK(t, startInOrder(ctx, rl, 3, 4))
		assert.Equal(t, durations(ms, 0, 0, 200, 300, 400), rec.times())
	})
}

// A slower rate set while a caller waits delays its turn: the units owed
// are counted at the new interval (x/time/rate's TestReserveSetLimit, the
// other way).
//
// spec: PP2
func TestSetRateSlowerDelaysTheWaitingCaller(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := newRecorder()
		rl := newRL(t, rec.service(), perSecond(10), ratelimit.Smooth(1))
		ctx := context.Background()
		chs := startInOrder(ctx, rl, 0, 1) // the second is due at 100 ms
		time.Sleep(50 * ms)
		require.NoError(t, rl.SetRate(perSecond(5))) // 50 ms owed at 100 become 100 at 200
		allOK(t, chs)
		assert.Equal(t, durations(ms, 0, 150), rec.times())
	})
}

// A burst set anew keeps the units the bucket holds and refills up to the
// new burst: at 5 a second, two calls at once empty a burst of 2; at 300
// ms the bucket holds 1.5 units, and a burst raised to 4 lets one go at
// once, then one each 200 ms until it refills; after a quiet spell 4 go
// at once (x/time/rate's TestReserveSetBurst). A burst lowered caps what
// the bucket holds.
//
// spec: PP2
func TestSetBurstKeepsTheUnitsHeldAndRefillsToTheNewBurst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := newRecorder()
		rl := newRL(t, rec.service(), perSecond(5), ratelimit.Smooth(2))
		ctx := context.Background()
		allOK(t, startInOrder(ctx, rl, 0, 1))
		time.Sleep(300 * ms)
		require.NoError(t, rl.SetBurst(4))
		allOK(t, startInOrder(ctx, rl, 2, 3, 4))
		assert.Equal(t, durations(ms, 0, 0, 300, 400, 600), rec.times())
		time.Sleep(time.Second) // 1.6 s: full again, at 4
		assert.Equal(t, 4, rl.Snapshot().Remaining)
		require.NoError(t, rl.SetBurst(1))
		assert.Equal(t, 1, rl.Snapshot().Remaining, "a lower burst caps the bucket")
		allOK(t, startInOrder(ctx, rl, 5, 6))
		assert.Equal(t, durations(ms, 1600, 1800), rec.times()[5:])
	})
}

// In the fixed window a new rate counts the calls already made in the
// current window against its Num, and the window ends Per after it began:
// a Limited window of 2 a second raised to 4 lets its waiting caller go at
// once; cut to 2 per 500 ms, the window ends at 500 ms.
//
// spec: PP2
func TestSetRateInTheWindowCountsTheCallsMadeInIt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := newRecorder()
		rl := newRL(t, rec.service(), perSecond(2))
		ctx := context.Background()
		chs := startInOrder(ctx, rl, 0, 1, 2, 3, 4)
		time.Sleep(300 * ms)
		require.NoError(t, rl.SetRate(perSecond(4))) // 2 more in this window
		allOK(t, chs[:4])
		assert.True(t, rl.Limited())
		require.NoError(t, rl.SetRate(ratelimit.Rate{Num: 2, Per: 500 * ms}))
		allOK(t, chs[4:])
		assert.Equal(t, durations(ms, 0, 0, 300, 300, 500), rec.times())
	})
}

// A lower rate set while the stage is not Limited limits it once the calls
// already made reach the new Num.
//
// spec: PP2
func TestSetRateLowerLimitsAnOpenStage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := newRecorder()
		rl := newRL(t, rec.service(), perSecond(4))
		ctx := context.Background()
		allOK(t, startInOrder(ctx, rl, 0))
		require.NoError(t, rl.SetRate(perSecond(1)))
		synctest.Wait()
		assert.True(t, rl.Limited(), "the one call made spent the new Num")
		_, err := rl.TryReserve()
		assert.ErrorIs(t, err, ratelimit.ErrLimited)
		allOK(t, startInOrder(ctx, rl, 1))
		assert.Equal(t, durations(ms, 0, 1000), rec.times())
	})
}

func TestSetRateAndSetBurstRefuseBadValues(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := actors.Func(func(_ context.Context, v int) (int, error) { return v, nil })
		rl := newRL(t, f, perSecond(5))
		troupetest.BadOption(t, rl.SetRate(ratelimit.Rate{}), "ratelimit", "Rate")
		troupetest.BadOption(t, rl.SetBurst(2), "ratelimit", "SetBurst")
		assert.Equal(t, perSecond(5), rl.Rate(), "unchanged")
		sm := newRL(t, f, perSecond(5), ratelimit.Smooth(2))
		troupetest.BadOption(t, sm.SetBurst(0), "ratelimit", "Smooth")
		troupetest.BadOption(t, sm.SetRate(ratelimit.Rate{Num: 1, Per: -1}), "ratelimit", "Rate")
	})
}
