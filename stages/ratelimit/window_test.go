package ratelimit

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/troupe-go/troupe"
)

// t0 is an arbitrary instant; the limiters never read the clock.
var t0 = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

func at(d time.Duration) time.Time { return t0.Add(d) }

const ms = time.Millisecond

// spec: RL2
func TestRL2_WindowLastUnitGoesAndLimits(t *testing.T) {
	w := newWindow(Rate{Num: 2, Per: time.Second})
	require.True(t, w.take(t0), "the first call opens a window at its own time")
	assert.Equal(t, Snapshot{Start: t0, Until: at(time.Second), Remaining: 1}, w.snapshot(t0))
	_, limited := w.limitedUntil(t0)
	assert.False(t, limited)

	require.True(t, w.take(at(100*ms)), "the call that spends the last unit gets it")
	until, limited := w.limitedUntil(at(100 * ms))
	assert.True(t, limited, "and leaves the window Limited")
	assert.Equal(t, at(time.Second), until)

	assert.False(t, w.take(at(999*ms)), "Limited: nothing more in this window")
	assert.Equal(t, 0, w.rem, "a refused call spends nothing")

	require.True(t, w.take(at(time.Second)), "the window's end opens a new window of N")
	assert.Equal(t, Snapshot{Start: at(time.Second), Until: at(2 * time.Second), Remaining: 1}, w.snapshot(at(time.Second)))
}

// spec: RL2
func TestRL2_WindowOfOneLimitsAfterEveryCall(t *testing.T) {
	w := newWindow(Rate{Num: 1, Per: 10 * ms})
	for i := range 5 {
		now := at(time.Duration(i) * 10 * ms)
		require.True(t, w.take(now))
		until, limited := w.limitedUntil(now)
		assert.True(t, limited)
		assert.Equal(t, now.Add(10*ms), until)
		assert.False(t, w.take(now.Add(9*ms)))
	}
}

// spec: RL3
func TestRL3_WindowFreshAfterIdle(t *testing.T) {
	w := newWindow(Rate{Num: 2, Per: time.Second})
	require.True(t, w.take(t0))
	require.True(t, w.take(at(10*time.Second)), "the window passed with a unit left: a fresh one opens now")
	assert.Equal(t, Snapshot{Start: at(10 * time.Second), Until: at(11 * time.Second), Remaining: 1}, w.snapshot(at(10*time.Second)))

	// After a Limited window that the alarm rolled on, then a long quiet spell.
	w = newWindow(Rate{Num: 2, Per: time.Second})
	w.take(t0)
	w.take(t0)
	w.wake(at(time.Second))
	assert.Equal(t, at(time.Second), w.start)
	require.True(t, w.take(at(10*time.Second)))
	assert.Equal(t, at(10*time.Second), w.start, "sporadic traffic is never limited wrongly")
	assert.Equal(t, 1, w.rem)
}

// spec: RL4
func TestRL4a_WindowChainsAtThePreviousEnd(t *testing.T) {
	for _, tc := range []struct {
		name      string
		wake      time.Duration // when the limiter notices (alarm handler or a call)
		viaTake   bool
		wantStart time.Duration
	}{
		{"on time", time.Second, false, time.Second},
		{"alarm handler late", 1300 * ms, false, time.Second},
		{"a call notices late", 1300 * ms, true, time.Second},
		{"late by just under a period", 2*time.Second - 1, false, time.Second},
		{"late by a whole period: start now", 2 * time.Second, false, 2 * time.Second},
		{"late by more: start now", 2500 * ms, true, 2500 * ms},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWindow(Rate{Num: 2, Per: time.Second})
			w.take(t0)
			w.take(t0)
			if tc.viaTake {
				require.True(t, w.take(at(tc.wake)))
			} else {
				w.wake(at(tc.wake))
			}
			assert.Equal(t, at(tc.wantStart), w.start)
			assert.Equal(t, at(tc.wantStart+time.Second), w.end())
		})
	}
}

func TestWindowStaleWakeChangesNothing(t *testing.T) {
	w := newWindow(Rate{Num: 2, Per: time.Second})
	w.take(t0)
	w.take(t0)
	w.wake(at(500 * ms)) // early: still Limited
	until, limited := w.limitedUntil(at(500 * ms))
	assert.True(t, limited)
	assert.Equal(t, at(time.Second), until)

	w = newWindow(Rate{Num: 2, Per: time.Second})
	w.take(t0)
	w.wake(at(5 * time.Second)) // not Limited: the next call opens its own window
	assert.Equal(t, t0, w.start)
	assert.Equal(t, 1, w.rem)
}

// spec: RL1
func TestRL1_RateChecks(t *testing.T) {
	for _, r := range []Rate{{0, time.Second}, {-1, time.Second}, {1, 0}, {1, -time.Second}, {}} {
		err := r.check()
		assert.ErrorIs(t, err, troupe.ErrBadConfig, "%+v", r)
	}
	assert.NoError(t, Rate{1, 1}.check())
	assert.Equal(t, 200*ms, Rate{5, time.Second}.interval())
	assert.Equal(t, 333333334*time.Nanosecond, Rate{3, time.Second}.interval(), "rounded up: never faster than the rate")
	assert.Equal(t, time.Nanosecond, Rate{10, time.Nanosecond}.interval())
	assert.Equal(t, time.Duration(1<<63-1), Rate{1, 1<<63 - 1}.interval())

	assert.ErrorIs(t, Rate{5, time.Second}.checkBurst(0), troupe.ErrBadConfig)
	assert.ErrorIs(t, Rate{5, time.Second}.checkBurst(-3), troupe.ErrBadConfig)
	assert.NoError(t, Rate{5, time.Second}.checkBurst(1))
	assert.NoError(t, Rate{1, 1<<63 - 1}.checkBurst(1))
	assert.ErrorIs(t, Rate{1, 1<<63 - 1}.checkBurst(2), troupe.ErrBadConfig, "burst intervals would overflow")
	assert.ErrorIs(t, Rate{1, time.Hour}.checkBurst(1<<62), troupe.ErrBadConfig)
}
