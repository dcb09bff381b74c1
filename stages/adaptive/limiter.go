package adaptive

import (
	"math"
	"time"

	"github.com/troupe-go/troupe/internal/sat"
)

// kind is what a call's outcome says about the service inside.
type kind uint8

const (
	ignored kind = iota // nothing: its caller cancelled it
	sample              // a completed call: its latency is measured
	drop                // a sign of overload: the limit is cut
)

// limiter is the algorithm: the limit, the calls in flight under it, and
// the window of outcomes that moves it. It reads no clock and takes no
// lock: the stage calls it under its mutex, with the times it read.
type limiter struct {
	min, max   int
	backoff    float64
	samples    int
	probeEvery time.Duration

	limit    int    // where the algorithm has moved the limit
	gate     int    // the limit admission follows: limit, or below it while an increase is being told (see raise)
	epoch    uint64 // bumped at every change of limit: only calls sent in the current epoch are measured
	inflight int    // calls handed on whose outcome has not come back

	// The window: outcomes of calls sent in the current epoch.
	n    int
	sum  time.Duration
	peak int // the most calls in flight at once since the window began

	// The baseline: the latency without a queue, measured by a probe
	// window at the min limit and lowered by any window faster than it.
	base    time.Duration
	baseAt  time.Time     // when a window last confirmed it (its mean within baseSlack of it)
	probing bool          // the current window is a probe
	saved   int           // the limit a probe returns to
	last    time.Duration // the last window's mean

	cuts uint64 // drops that cut the limit
}

// baseSlack is how close to the baseline a window's mean must be to
// confirm it, as a fraction of it.
const baseSlack = 0.1

// newLimiter returns a limiter that starts with a probe: the baseline is
// measured at the min limit before the limit moves to c.initial.
func newLimiter(c config) limiter {
	return limiter{
		min: c.min, max: c.max, backoff: c.backoff, samples: c.samples, probeEvery: c.probeEvery,
		limit: c.min, gate: c.min, probing: true, saved: c.initial,
	}
}

// admit counts one more call handed on if the gate allows it, and returns
// the epoch the call is measured in.
func (l *limiter) admit() (uint64, bool) {
	if l.inflight >= l.gate {
		return 0, false
	}
	l.inflight++
	l.peak = max(l.peak, l.inflight)
	return l.epoch, true
}

// unadmit takes back an admit whose call was not handed on after all.
func (l *limiter) unadmit() { l.inflight-- }

// done counts the outcome of a call sent in epoch ep that took rtt, at
// now, and returns the limit before and after it. An outcome of an earlier
// epoch moves nothing: that call was sent under another limit. A drop cuts
// the limit at once (so at most once per epoch: the calls sent before the
// cut are not held against the new limit); a full window moves it as TCP
// Vegas would (see vegas), or ends a probe.
func (l *limiter) done(ep uint64, now time.Time, rtt time.Duration, k kind) (old, cur int) {
	l.inflight--
	old = l.limit
	if ep != l.epoch || k == ignored {
		return old, old
	}
	if k == drop {
		l.cuts++
		if l.probing {
			l.saved = l.cut(l.saved) // the probe goes on, at the min
			return old, old
		}
		l.set(l.cut(l.limit))
		return old, l.limit
	}
	l.n++
	l.sum = sat.Add(l.sum, rtt)
	if l.n < max(l.samples, l.limit) {
		return old, old
	}
	mean := l.sum / time.Duration(l.n)
	l.last = mean
	if l.probing {
		l.probing = false
		l.base, l.baseAt = mean, now
		l.set(l.saved)
		return old, l.limit
	}
	l.set(l.vegas(mean, now))
	if now.Sub(l.baseAt) >= l.probeEvery && l.limit > l.min {
		l.probing, l.saved = true, l.limit
		l.set(l.min)
	}
	return old, l.limit
}

// cut returns the limit after a drop at limit n: n times the backoff
// ratio, and at least one less (set keeps it at the min or above).
func (l *limiter) cut(n int) int { return min(n-1, int(float64(n)*l.backoff)) }

// vegas returns the limit a window of mean latency mean calls for. The
// calls that queue at the service inside are estimated as
// q = limit * (1 - baseline/mean): the share of the calls in flight that
// wait rather than being served. Below alpha = 3*log10(limit) the limit
// grows by log10(limit) (at least 1), if the window used at least half of
// it; above beta = 6*log10(limit) it shrinks by half of q-beta (at least
// log10(limit) and 1, at most a quarter of the limit); in between it
// holds. Halving the excess damps the swing a latency that rises faster
// than a queue would explain (a steep knee) would cause.
func (l *limiter) vegas(mean time.Duration, now time.Time) int {
	if mean <= sat.Add(l.base, sat.Scale(l.base, baseSlack)) {
		l.base, l.baseAt = min(l.base, mean), now
	}
	lim := float64(l.limit)
	q := 0.0
	if mean > 0 {
		q = lim * (1 - float64(l.base)/float64(mean))
	}
	lg := math.Log10(lim)
	step := max(1, int(lg))
	alpha, beta := max(1, 3*lg), max(2, 6*lg)
	switch {
	case q < alpha:
		if 2*l.peak >= l.limit {
			return l.limit + step
		}
	case q > beta:
		return l.limit - min(max(step, int((q-beta)/2)), max(1, l.limit/4))
	}
	return l.limit
}

// set moves the limit to n, within the min and the max, and starts a new
// window; a new epoch too when the limit changed. A decrease closes the
// gate at once; an increase opens it only when raise is called (at once
// when nobody is told of changes).
func (l *limiter) set(n int) {
	n = min(max(n, l.min), l.max)
	l.n, l.sum, l.peak = 0, 0, l.inflight
	if n == l.limit {
		return
	}
	l.limit = n
	l.epoch++
	l.gate = min(l.gate, n)
}

// raise opens the gate up to to, never above the limit, and returns by
// how much it opened.
func (l *limiter) raise(to int) int {
	g := min(to, l.limit)
	if g <= l.gate {
		return 0
	}
	d := g - l.gate
	l.gate = g
	return d
}
