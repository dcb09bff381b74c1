package adaptive

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const ms = time.Millisecond

var t0 = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

func testLimiter(t *testing.T, opts ...Option) *limiter {
	t.Helper()
	c, err := configure(opts)
	require.NoError(t, err)
	l := newLimiter(c)
	return &l
}

// window sends n calls at once (up to the gate) and completes them with
// latency rtt at now, as kind k; it returns the limit after.
func window(t *testing.T, l *limiter, now time.Time, rtt time.Duration, k kind, n int) int {
	t.Helper()
	var eps []uint64
	for range n {
		ep, ok := l.admit()
		require.True(t, ok, "admitted")
		eps = append(eps, ep)
	}
	for _, ep := range eps {
		l.done(ep, now, rtt, k)
	}
	l.raise(l.limit)
	return l.limit
}

// spec: AL1
// The first window is a probe at the min: it measures the baseline, then
// the limit moves to the initial one.
func TestAL1_StartsWithAProbeAtTheMin(t *testing.T) {
	l := testLimiter(t, Limits(2, 100), Initial(20), Samples(3))
	assert.Equal(t, [2]int{2, 2}, [2]int{l.limit, l.gate})
	assert.True(t, l.probing)
	window(t, l, t0, 10*ms, sample, 2)
	assert.True(t, l.probing, "3 samples needed")
	assert.Equal(t, 20, window(t, l, t0, 10*ms, sample, 1))
	assert.False(t, l.probing)
	assert.Equal(t, 10*ms, l.base)
}

// spec: AL1
// A drop during a probe cuts the limit the probe returns to.
func TestAL1_ADropDuringAProbeCutsWhereItReturns(t *testing.T) {
	l := testLimiter(t, Initial(20), Samples(1))
	window(t, l, t0, 10*ms, drop, 1)
	assert.True(t, l.probing)
	assert.Equal(t, 1, l.limit)
	assert.Equal(t, 18, l.saved)
	assert.Equal(t, 18, window(t, l, t0, 10*ms, sample, 1))
}

// spec: AL1
// Vegas: the queue estimate limit*(1-baseline/mean) grows the limit below
// alpha = 3*log10(limit) (if the window used at least half of it), shrinks
// it above beta = 6*log10(limit) by (q-beta)/2 (at least 1, at most a
// quarter), and holds it in between.
func TestAL1_VegasDecisions(t *testing.T) {
	l := testLimiter(t, Initial(20), Samples(1))
	window(t, l, t0, 10*ms, sample, 1) // the probe: baseline 10ms
	require.Equal(t, 20, l.limit)
	assert.Equal(t, 21, window(t, l, t0, 10*ms, sample, 20), "no queue: one more")
	for range 3 {
		window(t, l, t0, 10*ms, sample, 7)
	}
	assert.Equal(t, 21, l.limit, "no queue, but at most 7 of 21 used: it holds")
	// q = 21*(1-10/40) = 15.75, beta = 6*log10(21) = 7.9: (q-beta)/2 = 3.9.
	assert.Equal(t, 18, window(t, l, t0, 40*ms, sample, 21), "three less")
	assert.Equal(t, 19, window(t, l, t0, 12*ms, sample, 18), "q = 3.0 < alpha = 3.8")
	assert.Equal(t, 19, window(t, l, t0, 14*ms, sample, 19), "q = 5.4 between 3.8 and 7.7: it holds")
	assert.Equal(t, 15, window(t, l, t0, 210*ms, sample, 19), "q = 18.1: a quarter at most")
	assert.Equal(t, 16, window(t, l, t0, 9*ms, sample, 15), "faster than the baseline: the new baseline")
	assert.Equal(t, 9*ms, l.base)
	assert.Equal(t, 9*ms, l.last)
}

// spec: AL1
// Only the calls sent under the current limit move it: a drop cuts once,
// the outcomes of calls sent before count for nothing.
func TestAL1_OneCutPerEpoch(t *testing.T) {
	l := testLimiter(t, Initial(11), Samples(1))
	window(t, l, t0, 10*ms, sample, 1)
	var eps []uint64
	for range 5 {
		ep, ok := l.admit()
		require.True(t, ok)
		eps = append(eps, ep)
	}
	old, cur := l.done(eps[0], t0, 10*ms, drop)
	assert.Equal(t, [2]int{11, 9}, [2]int{old, cur}, "11*0.9 = 9.9")
	assert.Equal(t, 9, l.gate, "a decrease closes the gate at once")
	for _, ep := range eps[1:] {
		_, cur = l.done(ep, t0, 10*ms, drop)
		assert.Equal(t, 9, cur)
	}
	assert.Equal(t, uint64(1), l.cuts)
	assert.Zero(t, l.inflight)
}

// spec: AL1
// The gate follows an increase only when raised, never above the limit.
func TestAL1_AnIncreaseOpensTheGateWhenRaised(t *testing.T) {
	l := testLimiter(t, Initial(5), Samples(1))
	l.done(must(l.admit()), t0, 10*ms, sample)
	assert.Equal(t, [2]int{5, 1}, [2]int{l.limit, l.gate}, "the probe ended; not raised yet")
	assert.Equal(t, 4, l.raise(9))
	assert.Equal(t, 5, l.gate)
	assert.Zero(t, l.raise(3))
}

func must(ep uint64, ok bool) uint64 {
	if !ok {
		panic("not admitted")
	}
	return ep
}

// spec: AL1
// A baseline no window has confirmed for ProbeEvery is measured again, at
// the min: a service that became slower for good gets its limit back.
func TestAL1_AStaleBaselineIsProbedAgain(t *testing.T) {
	l := testLimiter(t, Initial(4), Samples(1), ProbeEvery(time.Second), Limits(1, 8))
	window(t, l, t0, 10*ms, sample, 1)
	require.Equal(t, 10*ms, l.base)
	assert.Equal(t, 5, window(t, l, t0.Add(100*ms), 10*ms, sample, 4))
	assert.Equal(t, 6, window(t, l, t0.Add(900*ms), 11*ms, sample, 5), "within 10 % of the baseline: confirms it")
	assert.Equal(t, t0.Add(900*ms), l.baseAt)

	// The service is three times slower from now on: q = 6*(1-10/30) = 4,
	// between alpha = 2.3 and beta = 4.7: the limit holds.
	assert.Equal(t, 6, window(t, l, t0.Add(1500*ms), 30*ms, sample, 6))
	assert.False(t, l.probing, "the baseline is 600ms old")
	assert.Equal(t, 1, window(t, l, t0.Add(1900*ms), 30*ms, sample, 6), "1s old: a probe at the min")
	assert.True(t, l.probing)
	assert.Equal(t, 6, window(t, l, t0.Add(1930*ms), 30*ms, sample, 1), "the probe window ends: back to 6")
	assert.Equal(t, 30*ms, l.base, "the new baseline")
	assert.Equal(t, 7, window(t, l, t0.Add(2*time.Second), 30*ms, sample, 6), "no queue: it grows again")
}
