package redisquota

import (
	"sync"
	"time"
)

// localRate is a Limiter's fallback: its share of the rate, kept in the
// process by the same algorithm as the script (GCRA), on the monotonic
// clock. It is safe for concurrent use.
type localRate struct {
	interval  time.Duration // never changed
	tolerance time.Duration // never changed

	mu  sync.Mutex
	tat time.Time // guarded by mu
}

// take spends one unit at now if one is left, and says how long until the
// next (after the one taken) or until one is left.
func (l *localRate) take(now time.Time) (bool, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	tat := l.tat
	if tat.Before(now) {
		tat = now
	}
	if due := tat.Add(-l.tolerance); now.Before(due) {
		return false, due.Sub(now)
	}
	l.tat = tat.Add(l.interval)
	return true, max(l.tat.Add(-l.tolerance).Sub(now), 0)
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
