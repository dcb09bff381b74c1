package ratelimit_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/stages/ratelimit"
	"github.com/troupe-go/troupe/troupetest"
)

// spec: RL4
func TestRL4a_LateAlarmHandlerStillOpensTheWindowAtThePreviousEnd(t *testing.T) {
	for _, tc := range []struct {
		name      string
		busyUntil time.Duration // the actor is busy until then: the alarm handler runs then
		start     time.Duration // the second window's start
		last      time.Duration // when the call that waited for the third window goes
	}{
		{"handler on time", 0, time.Second, 2 * time.Second},
		{"handler 300 ms late", 1300 * ms, time.Second, 2 * time.Second},     // tower: 2.3 s
		{"handler more than a period late", 3500 * ms, 3500 * ms, 4500 * ms}, // RL3: start then
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				rec := newRecorder()
				inner := &stallFunc{f: rec.service()}
				rl := newRL(t, inner, perSecond(2))
				ctx := context.Background()
				ps := reserve(t, rl, 4)
				require.NoError(t, (<-troupetest.GoWith(ctx, ps[0], 0)).Err)
				inner.stall.Store(int64(tc.busyUntil))
				b := troupetest.GoWith(ctx, ps[1], 1) // spends the last unit, then holds the actor
				synctest.Wait()
				c, d := troupetest.GoWith(ctx, ps[2], 2), troupetest.GoWith(ctx, ps[3], 3) // queued for the next window
				e := troupetest.Go[int, int](ctx, rl, 4)                                   // reserves while Limited
				time.Sleep(max(tc.busyUntil, time.Second) - rec.since())
				synctest.Wait()
				assert.Equal(t, ratelimit.Snapshot{Limited: true, Start: rec.start.Add(tc.start), Until: rec.start.Add(tc.start + time.Second)}, rl.Snapshot(),
					"the second window began at the first one's end, not when its handler ran")
				for _, ch := range []<-chan troupetest.Result[int]{b, c, d, e} {
					require.NoError(t, (<-ch).Err)
				}
				bAt := max(tc.busyUntil, 0)
				cAt := max(tc.busyUntil, time.Second)
				assert.Equal(t, []time.Duration{0, bAt, cAt, cAt, tc.last}, rec.times())
			})
		})
	}
}

// spec: RL4
func TestRL4b_SmoothModeSpacesCalls(t *testing.T) {
	for _, tc := range []struct {
		burst int
		want  []time.Duration
	}{
		{1, durations(ms, 0, 200, 400, 600, 800, 1000, 1200, 1400)},
		{3, durations(ms, 0, 0, 0, 200, 400, 600, 800, 1000)},
	} {
		t.Run(fmt.Sprintf("burst %d", tc.burst), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				rec := newRecorder()
				rl := newRL(t, rec.service(), perSecond(5), ratelimit.Smooth(tc.burst))
				ctx := context.Background()
				var outs []<-chan troupetest.Result[int]
				for i := range 8 {
					outs = append(outs, troupetest.Go[int, int](ctx, rl, i))
				}
				synctest.Wait()
				assert.True(t, rl.Limited())
				assert.Equal(t, ratelimit.Snapshot{Limited: true, Until: rec.start.Add(200 * ms)}, rl.Snapshot())
				for _, o := range outs {
					require.NoError(t, (<-o).Err)
				}
				assert.Equal(t, tc.want, rec.times())
				assert.LessOrEqual(t, maxInSpan(rec.times(), time.Second), 5+tc.burst-1)

				// A quiet spell refills the burst, no more.
				time.Sleep(time.Minute)
				assert.Equal(t, tc.burst, rl.Snapshot().Remaining)
				n := len(rec.times())
				for i := range tc.burst + 1 {
					outs[i] = troupetest.Go[int, int](ctx, rl, i)
				}
				synctest.Wait()
				assert.Len(t, rec.times(), n+tc.burst, "burst calls at once")
				for _, o := range outs[:tc.burst+1] {
					<-o
				}
				ts := rec.times()
				assert.Equal(t, 200*ms, ts[n+tc.burst]-ts[n], "then the next one an interval later")
			})
		})
	}
}

// spec: RL4
func TestRL4b_SmoothBurstOneNeverExceedsTheRateInAnySpan(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := newRecorder()
		rl := newRL(t, rec.service(), ratelimit.Rate{Num: 3, Per: time.Second}, ratelimit.Smooth(1))
		r := rand.New(rand.NewPCG(5, 6))
		var wg sync.WaitGroup
		for i := range 30 {
			delays := []time.Duration{time.Duration(r.IntN(5000)) * ms, time.Duration(r.IntN(3000)) * ms}
			wg.Go(func() {
				for _, d := range delays {
					time.Sleep(d)
					_, err := troupe.Do(context.Background(), rl, i)
					assert.NoError(t, err)
				}
			})
		}
		wg.Wait()
		ts := rec.times()
		require.Len(t, ts, 60)
		assert.LessOrEqual(t, maxInSpan(ts, time.Second), 3)
		for i := 1; i < len(ts); i++ {
			require.GreaterOrEqual(t, ts[i]-ts[i-1], 333333334*time.Nanosecond, "spacing at %d", i)
		}
	})
}

// spec: RL5
func TestRL5_OneAlarmServesManyWindows(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := newRecorder()
		rl := newRL(t, rec.service(), ratelimit.Rate{Num: 3, Per: 10 * ms})
		var wg sync.WaitGroup
		for i := range 6 {
			wg.Go(func() {
				for range 500 {
					_, err := troupe.Do(context.Background(), rl, i)
					assert.NoError(t, err)
				}
			})
		}
		wg.Wait()
		ts := rec.times()
		require.Len(t, ts, 3000)
		for i, at := range ts {
			require.Equal(t, time.Duration(i/3)*10*ms, at, "call %d", i)
		}
		assert.Equal(t, 3, maxInSpan(ts, 10*ms))
	})
}
