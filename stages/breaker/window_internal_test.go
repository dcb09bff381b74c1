package breaker

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// spec: CB1
func TestCB1_TheCountWindowSlidesOneCallAtATime(t *testing.T) {
	w := newCountWindow(3)
	var zero time.Time
	steps := []struct {
		failed, slow bool
		want         tally
	}{
		{true, false, tally{1, 1, 0}},
		{false, true, tally{2, 1, 1}},
		{true, true, tally{3, 2, 2}},
		{false, false, tally{3, 1, 2}}, // the first leaves
		{false, false, tally{3, 1, 1}}, // the second leaves
		{false, false, tally{3, 0, 0}}, // the third leaves
	}
	for i, s := range steps {
		w.add(zero, s.failed, s.slow)
		assert.Equal(t, s.want, w.totals(zero), "after outcome %d", i+1)
	}
	w.reset(zero)
	assert.Equal(t, tally{}, w.totals(zero))
	w.add(zero, true, false)
	assert.Equal(t, tally{1, 1, 0}, w.totals(zero), "a reset window fills from empty")
}

// spec: CB1
func TestCB1_TheTimeWindowDropsWholeBuckets(t *testing.T) {
	start := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(d time.Duration) time.Time { return start.Add(d) }
	w := newTimeWindow(start, 4*time.Second, 4) // buckets of 1 s
	w.add(at(500*time.Millisecond), true, false)
	w.add(at(1500*time.Millisecond), false, true)
	w.add(at(3999*time.Millisecond), true, true)
	assert.Equal(t, tally{3, 2, 2}, w.totals(at(3999*time.Millisecond)))
	assert.Equal(t, tally{2, 1, 2}, w.totals(at(4*time.Second)), "period 0 leaves at 4 s")
	assert.Equal(t, tally{1, 1, 1}, w.totals(at(5*time.Second)), "period 1 at 5 s")
	assert.Equal(t, tally{1, 1, 1}, w.totals(at(4*time.Second)), "time read late never goes back")
	assert.Equal(t, tally{0, 0, 0}, w.totals(at(7*time.Second)))
	w.add(at(7*time.Second), true, false)
	w.add(at(time.Hour), false, false) // far later: every bucket is cleared at once
	assert.Equal(t, tally{1, 0, 0}, w.totals(at(time.Hour)))
	w.reset(at(time.Hour + time.Second))
	assert.Equal(t, tally{}, w.totals(at(time.Hour+time.Second)))
	w.add(at(time.Hour+time.Second), true, false)
	assert.Equal(t, tally{1, 1, 0}, w.totals(at(time.Hour+4*time.Second+999*time.Millisecond)))
	assert.Equal(t, tally{}, w.totals(at(time.Hour+5*time.Second)))
}

// spec: CB1
func TestCB1_TheOpenDelayGrowsByItsFactorUpToItsLimit(t *testing.T) {
	o := options{delay: time.Second, factor: 1.5, maxDelay: 4 * time.Second}
	var got []time.Duration
	d := time.Duration(0)
	for n := range 6 {
		d = nextDelay(n, d, &o)
		got = append(got, d)
	}
	assert.Equal(t, []time.Duration{time.Second, 1500 * time.Millisecond, 2250 * time.Millisecond,
		3375 * time.Millisecond, 4 * time.Second, 4 * time.Second}, got)
}
