package ratelimit

import "time"

// gcra is the smooth limiter: the generic cell rate algorithm,
// which is a token bucket of size burst refilled by one unit per interval,
// kept as a single time. tat (theoretical arrival time) is when the next
// call would be due if calls had come exactly one interval apart; a call at
// now conforms when now >= tat - tolerance, with tolerance =
// (burst-1)*interval, and moves tat to max(tat, now) + interval.
//
// So burst calls may go at once after a quiet spell, then one per interval;
// with burst 1 calls are at least an interval apart, and any span of one
// period holds at most Num calls (the interval is rounded up). The schedule
// is absolute: a stage that processes a call late shifts it only by the
// lateness beyond the tolerance (with burst 1, by all of it: strict spacing
// wins over catching up).
type gcra struct {
	r         Rate
	interval  time.Duration
	tolerance time.Duration
	burst     int
	tat       time.Time // zero before the first call
}

// newGCRA returns a smooth limiter for r and burst, both checked before.
func newGCRA(r Rate, burst int) *gcra {
	iv := r.interval()
	return &gcra{r: r, interval: iv, tolerance: time.Duration(burst-1) * iv, burst: burst}
}

func (g *gcra) rate() Rate { return g.r }

// due is the earliest time at which the next call conforms.
func (g *gcra) due() time.Time { return g.tat.Add(-g.tolerance) }

func (g *gcra) take(now time.Time) bool { return g.takeN(now, 1) }

// takeN spends n units at now when the bucket holds n: now is at least
// n-1 intervals past due.
func (g *gcra) takeN(now time.Time, n int) bool {
	if now.Before(g.readyAt(now, n)) {
		return false
	}
	t := g.tat
	if t.Before(now) {
		t = now
	}
	g.tat = t.Add(time.Duration(n) * g.interval)
	return true
}

// readyAt is when the bucket holds n units.
func (g *gcra) readyAt(_ time.Time, n int) time.Time {
	return g.due().Add(time.Duration(n-1) * g.interval)
}

func (g *gcra) maxCost() int { return g.burst }

func (g *gcra) takeSpare(now time.Time) bool {
	t := g.tat
	if t.Before(now) {
		t = now
	}
	next := t.Add(g.interval)
	if now.Before(next.Add(-g.tolerance)) {
		return false // it would take the last unit, or there is none
	}
	g.tat = next
	return true
}

func (g *gcra) limitedUntil(now time.Time) (time.Time, bool) {
	d := g.due()
	return d, now.Before(d)
}

// wake does nothing: the schedule is absolute.
func (g *gcra) wake(time.Time) {}

// remaining is how many calls may go at once at now: the burst less the
// intervals still owed (tat - now, rounded up). take keeps tat <= now +
// burst*interval, so the result is never negative.
func (g *gcra) remaining(now time.Time) int {
	if !g.tat.After(now) {
		return g.burst
	}
	owed := g.tat.Sub(now)
	used := int(owed / g.interval)
	if owed%g.interval != 0 {
		used++
	}
	return max(g.burst-used, 0)
}

func (g *gcra) snapshot(now time.Time) Snapshot {
	return Snapshot{Until: g.due(), Remaining: g.remaining(now)}
}
