package balance

import (
	"math"
	"time"
)

// unread stands for a reading of the balancer's clock not taken.
const unread = time.Duration(math.MinInt64)

// clock returns the time since the balancer was made, on the monotonic
// clock: the time its loads and cooldowns are kept in. It is cheaper to
// read than time.Now, which reads the wall clock too.
func (b *Balancer[K, Req, Res]) clock() time.Duration { return time.Since(b.epoch) }

// rtt is an endpoint's peak-EWMA estimate of its round trip, in
// nanoseconds, as of at (a reading of the balancer's clock). It is a plain
// value; the balancer keeps one per endpoint under its lock.
type rtt struct {
	ns float64
	at time.Duration
}

// observe returns the estimate after a round trip of took ended at now: a
// round trip above the estimate replaces it at once (the peak); one below
// it pulls the estimate towards it, by the share of the decay time that
// passed since the estimate was last updated: est*w + took*(1-w), with
// w = exp(-elapsed/decay).
func (e rtt) observe(took, now, decay time.Duration) rtt {
	t := float64(max(took, 0))
	if e.ns < t {
		return rtt{ns: t, at: now}
	}
	w := weight(now-e.at, decay)
	return rtt{ns: e.ns*w + t*(1-w), at: now}
}

// decayed returns the estimate at now with no round trip seen since at: it
// decays towards zero (a round trip of zero, observed now), so an endpoint
// idle for long enough is tried again.
func (e rtt) decayed(now, decay time.Duration) rtt {
	return rtt{ns: e.ns * weight(now-e.at, decay), at: now}
}

// weight is the share of an estimate that remains after elapsed:
// exp(-elapsed/decay), 1 for no time (or a clock that went back). Picks
// under load ask for it with elapsed a tiny share of decay, where four
// terms of its series are exact to within 1e-13 and cost a few
// multiplications instead of math.Exp.
func weight(elapsed, decay time.Duration) float64 {
	if elapsed <= 0 {
		return 1
	}
	x := float64(elapsed) / float64(decay)
	if x < 1e-3 {
		return 1 - x*(1-x/2*(1-x/3))
	}
	return math.Exp(-x)
}
