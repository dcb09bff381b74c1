package redisquota

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/troupe-go/troupe/stages/ratelimit"
)

// localRate is a Limiter's fallback: its share of the rate, kept in the
// process by GCRA on the monotonic clock. The share is conservative so
// that n processes falling back together stay within the rate at the
// rate's own granularity whatever their phases: each takes floor(Num/n)
// calls per Per, evenly spaced, so that no span of Per holds more than
// that many of one process's, nor more than Num of all of theirs (a
// share of Num/n per Per would let n processes in step put 2n calls in
// one span: 8 instead of 5, for 5 per second over 4). Its burst is
// 1 + (burst-1)/n, for the same reason.
//
// An outage's first local unit comes one Per after it began, so that a
// span of Per never holds both the units Redis granted before and the
// local ones; and the units granted locally in the last Per are owed to
// Redis, which counts them at the first round trip after it is back, at
// the times they were granted, so that a span across the end holds no
// more either.
//
// A share below one call per period (Num < n) is none: calls then wait
// for Redis. It is safe for concurrent use; a nil *localRate is the
// failing-closed Limiter's, and owes nothing.
type localRate struct {
	interval  time.Duration // never changed; 0: no share
	tolerance time.Duration // never changed
	per       time.Duration // never changed
	most      int64         // never changed: the most units one span of Per holds

	owes atomic.Bool // local units were granted that Redis has not counted yet

	mu     sync.Mutex
	tat    time.Time // guarded by mu
	outage int64     // the outage the schedule belongs to; guarded by mu
}

func newLocalRate(r ratelimit.Rate, burst, n int) *localRate {
	k := r.Num / n
	l := &localRate{per: r.Per}
	if k == 0 {
		return l
	}
	b := 1 + (burst-1)/n
	l.interval = time.Duration(ceilDiv(int64(r.Per), int64(k)))
	l.tolerance = time.Duration(b-1) * l.interval
	l.most = int64(k + b - 1)
	return l
}

// none reports whether the share is no call at all.
func (l *localRate) none() bool { return l.interval == 0 }

// take spends one unit at now, in the outage numbered outage, if one is
// left, and says how long until the next (after the one taken) or until
// one is left.
func (l *localRate) take(now time.Time, outage int64) (bool, time.Duration) {
	if l.none() {
		return false, l.per
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if outage != l.outage {
		l.outage = outage
		l.tat = now.Add(l.per + l.tolerance)
	}
	tat := l.tat
	if tat.Before(now) {
		tat = now
	}
	if due := tat.Add(-l.tolerance); now.Before(due) {
		return false, due.Sub(now)
	}
	l.tat = tat.Add(l.interval)
	l.owes.Store(true)
	return true, max(l.tat.Add(-l.tolerance).Sub(now), 0)
}

// takeOwed returns how many local units were granted in the span of Per
// before now, and when the first of them was (by its slot in the
// schedule: the units were granted at their slots or up to the tolerance
// before, one interval apart), and owes none from then on.
func (l *localRate) takeOwed(now time.Time) (n int64, first time.Time) {
	if l == nil || !l.owes.Load() {
		return 0, time.Time{}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.owes.Swap(false) {
		return 0, time.Time{}
	}
	// The slots granted are tat-interval, tat-2*interval, ...: count
	// those after now-Per.
	last := l.tat.Add(-l.interval)
	if x := last.Sub(now.Add(-l.per)); x > 0 {
		n = min(int64((x+l.interval-1)/l.interval), l.most)
		first = l.tat.Add(-time.Duration(n) * l.interval)
	}
	return n, first
}

// owe has the units taken by takeOwed counted again at the next round
// trip (the one that carried them failed).
func (l *localRate) owe() {
	if l != nil {
		l.owes.Store(true)
	}
}

// localBudget is a Budget's fallback: its share of the leases, as a
// semaphore. It is safe for concurrent use.
type localBudget struct{ slots chan struct{} }

func (l *localBudget) tryTake() bool {
	select {
	case l.slots <- struct{}{}:
		return true
	default:
		return false
	}
}

func (l *localBudget) give() { <-l.slots }
