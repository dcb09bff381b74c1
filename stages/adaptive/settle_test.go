package adaptive_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/stages/adaptive"
	"github.com/troupe-go/troupe/troupetest"
)

// drive runs callers callers against svc, each calling in a loop until
// the bubble's clock reaches start+until, and waits for them all.
func drive(svc troupe.Service[int, int], callers int, start time.Time, until time.Duration) {
	var wg sync.WaitGroup
	for i := range callers {
		wg.Go(func() {
			for time.Since(start) < until {
				_, _ = troupe.Do(context.Background(), svc, i)
			}
		})
	}
	wg.Wait()
}

// spec: AL1
// The limit settles within 25 % of the knee of a service whose latency is
// flat up to K calls in flight and steep beyond, driven by four times as
// many callers as K; it falls during an outage (every call fails) and
// during a latency spike (every call five times slower), and settles
// within 25 % of K again after each.
func TestAL1_SettlesNearTheKneeAndRecoversAfterOverload(t *testing.T) {
	for _, k := range []int{10, 20} {
		t.Run(fmt.Sprintf("K=%d", k), func(t *testing.T) { settleAndRecover(t, k) })
	}
}

func settleAndRecover(t *testing.T, k int) {
	lo, hi := (3*k+3)/4, 5*k/4 // within 25 % of K: 7.5 to 12.5 is 8 to 12
	callers := 4 * k
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		h := newHistory(adaptive.DefaultMin) // the stage starts with a probe at the min
		d := &knee{k: k, base: 10 * time.Millisecond, start: start, check: h.check}
		d.phase = func(since time.Duration) (bool, time.Duration) {
			switch {
			case since >= 3*time.Second && since < 4*time.Second:
				return true, 1 // an outage: every call fails
			case since >= 7*time.Second && since < 8*time.Second:
				return false, 5 // a latency spike
			}
			return false, 1
		}
		a, err := adaptive.New[int, int](troupetest.NewSystem(t), actors.Func(d.call), adaptive.OnLimitChange(h.told(start)))
		require.NoError(t, err)
		require.True(t, a.Snapshot().Probing)

		drive(a, callers, start, 11*time.Second)

		for _, w := range []struct {
			name     string
			from, to time.Duration
		}{
			{"settled", 2 * time.Second, 3 * time.Second},
			{"after the outage", 5 * time.Second, 7 * time.Second},
			{"after the spike", 9 * time.Second, 11 * time.Second},
		} {
			l, u := h.between(w.from, w.to)
			t.Logf("%s: limit between %d and %d", w.name, l, u)
			assert.GreaterOrEqual(t, l, lo, w.name)
			assert.LessOrEqual(t, u, hi, w.name)
		}
		l, _ := h.between(3500*time.Millisecond, 4*time.Second)
		assert.Equal(t, 1, l, "the outage cut the limit to the min")
		l, _ = h.between(7*time.Second, 8*time.Second)
		assert.Less(t, l, lo, "the spike brought the limit down")
		for _, p := range [][2]time.Duration{{4 * time.Second, 7 * time.Second}, {8 * time.Second, 11 * time.Second}} {
			back := h.settledAt(p[0], p[1], lo, hi)
			t.Logf("within 25 %% of K for good %v after the overload ended", back-p[0])
			assert.Less(t, back-p[0], 750*time.Millisecond)
		}

		h.mu.Lock()
		assert.Empty(t, h.over, "no call started above the limit")
		assert.Zero(t, h.outOfOrder, "changes are told in order")
		h.mu.Unlock()
		assert.Zero(t, d.inFlight())
		s := a.Snapshot()
		assert.Zero(t, s.InFlight)
		assert.Equal(t, 10*time.Millisecond, s.Baseline)
		assert.Equal(t, a.Limit(), a.Available(), "every permit is back")
		require.NoError(t, a.Close(context.Background()))
	})
}
