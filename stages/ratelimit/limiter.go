package ratelimit

import "time"

// limiter is the arithmetic of a rate: which calls may go when. Its
// implementations never read the clock: every method takes the time as now,
// like golang.org/x/time/rate, so that they are tested directly with exact
// times. They are not safe for concurrent use: the stage's behavior owns one
// and guards it (see behavior.mu).
type limiter interface {
	// take spends one unit at now and reports true, or reports false and
	// spends nothing when no unit is left before some later time.
	take(now time.Time) bool
	// takeSpare spends one unit at now and reports true only when a unit
	// is left at now after it (the limiter stays open); otherwise it
	// spends nothing and reports false.
	takeSpare(now time.Time) bool
	// limitedUntil reports whether no unit is left at now (tower's Limited
	// state), and when the next one comes.
	limitedUntil(now time.Time) (until time.Time, limited bool)
	// wake tells the limiter that the stage's alarm fired at now.
	wake(now time.Time)
	// snapshot describes the limiter at now; the caller fills in Limited.
	snapshot(now time.Time) Snapshot
	// setRate changes the rate from now on (see RateLimit.SetRate); rate
	// reports it.
	setRate(now time.Time, r Rate) error
	rate() Rate
	// takeN is take of n units at once (n from 1 to maxCost); readyAt is
	// when n units are left, at the earliest; maxCost is the most ever
	// left at once.
	takeN(now time.Time, n int) bool
	readyAt(now time.Time, n int) time.Time
	maxCost() int
	// turn is when the unit k places after the next comes, while Limited
	// at now (k 0: the next unit).
	turn(now time.Time, k int) time.Time
}

// spares reports whether lim can ever spare a unit (see takeSpare): a
// window or a burst of one cannot, and a stage over it keeps every request
// on the actor's path rather than ask in vain.
func spares(lim limiter) bool {
	switch l := lim.(type) {
	case *window:
		return l.n > 1
	case *gcra:
		return l.burst > 1
	}
	return false
}

// Snapshot is a rate limit stage's state at one moment, for observation.
//
// A plain value, safe for concurrent use.
type Snapshot struct {
	// Limited reports whether the stage holds callers back: reservations
	// wait and the stage takes no requests until Until.
	Limited bool
	// Start is when the current fixed window began (zero before the first
	// call, and in smooth mode).
	Start time.Time
	// Until is when the current fixed window ends; a window whose Until has
	// passed is over, and the next call opens a new one. In smooth mode it
	// is when the next unit becomes available (at or before the snapshot's
	// time when one is available now).
	Until time.Time
	// Remaining is how many calls may still go in the current fixed window,
	// or, in smooth mode, how many may go at once at the snapshot's time.
	Remaining int
	// With a Remote limiter, Start is zero, Until is when the stage asks
	// again while Limited, and Remaining is 0 while Limited and -1 (not
	// known to the stage) otherwise.
}
