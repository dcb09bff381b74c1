package breaker

import "time"

// tally counts outcomes: calls, and of those the failed and the slow ones.
type tally struct{ calls, failures, slow int }

func (t *tally) add(failed, slow bool, sign int) {
	t.calls += sign
	if failed {
		t.failures += sign
	}
	if slow {
		t.slow += sign
	}
}

// window is the set of recent outcomes a closed breaker judges. Its
// methods take the time now (a window of calls ignores it); they are not
// safe for concurrent use (the breaker's lock guards its window).
type window interface {
	add(now time.Time, failed, slow bool)
	totals(now time.Time) tally
	reset(now time.Time)
}

// countWindow holds the last len(ring) outcomes, as a ring of flags.
type countWindow struct {
	ring []uint8 // flagFailed | flagSlow per outcome
	next int     // where the next outcome goes
	full bool    // every entry of ring holds an outcome
	sum  tally
}

const (
	flagFailed = 1 << iota
	flagSlow
)

func newCountWindow(n int) *countWindow { return &countWindow{ring: make([]uint8, n)} }

func (w *countWindow) add(_ time.Time, failed, slow bool) {
	if w.full {
		old := w.ring[w.next]
		w.sum.add(old&flagFailed != 0, old&flagSlow != 0, -1)
	}
	var v uint8
	if failed {
		v |= flagFailed
	}
	if slow {
		v |= flagSlow
	}
	w.ring[w.next] = v
	w.sum.add(failed, slow, 1)
	if w.next++; w.next == len(w.ring) {
		w.next, w.full = 0, true
	}
}

func (w *countWindow) totals(time.Time) tally { return w.sum }

func (w *countWindow) reset(time.Time) { w.next, w.full, w.sum = 0, false, tally{} }

// timeWindow holds the outcomes of the last len(buckets) periods of width
// each. Period k covers [start + k*width, start + (k+1)*width) and lives in
// buckets[k % len(buckets)]; the window at a time in period k holds periods
// k-len(buckets)+1 to k, so an outcome leaves it when period k+len(buckets)
// begins.
type timeWindow struct {
	start   time.Time
	width   time.Duration
	buckets []tally
	cur     int64 // the newest period the buckets hold
	sum     tally
}

func newTimeWindow(start time.Time, span time.Duration, n int) *timeWindow {
	return &timeWindow{start: start, width: span / time.Duration(n), buckets: make([]tally, n)}
}

// period returns the period now falls in (never before the current one:
// the clock is monotonic, but a caller may have read it before another).
func (w *timeWindow) period(now time.Time) int64 {
	return max(int64(now.Sub(w.start)/w.width), w.cur)
}

// advance empties the buckets of the periods that have left the window by
// now; it costs at most one step per bucket.
func (w *timeWindow) advance(now time.Time) {
	k := w.period(now)
	n := int64(len(w.buckets))
	if k-w.cur >= n {
		clear(w.buckets)
		w.cur, w.sum = k, tally{}
		return
	}
	for ; w.cur < k; w.cur++ {
		b := &w.buckets[(w.cur+1)%n]
		w.sum.calls -= b.calls
		w.sum.failures -= b.failures
		w.sum.slow -= b.slow
		*b = tally{}
	}
}

func (w *timeWindow) add(now time.Time, failed, slow bool) {
	w.advance(now)
	w.buckets[w.cur%int64(len(w.buckets))].add(failed, slow, 1)
	w.sum.add(failed, slow, 1)
}

func (w *timeWindow) totals(now time.Time) tally {
	w.advance(now)
	return w.sum
}

func (w *timeWindow) reset(now time.Time) {
	clear(w.buckets)
	w.cur, w.sum = w.period(now), tally{}
}
