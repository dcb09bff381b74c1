package adaptive_test

import (
	"context"
	"errors"
	"sync"
	"time"
)

// errOverload is what the simulated service fails with during an outage.
var errOverload = errors.New("simulated overload")

// knee is a simulated service for tests inside a synctest bubble: a call
// that starts with n calls in flight (itself included) sleeps base while n
// is at most k, and base*(1+2*(n-k)) beyond: flat up to the knee, steep
// past it. A phase function of the time since start can make calls fail
// (after base) or make every call slower by a factor.
//
// The bubble's clock stands still while calls end and the next ones start:
// n is the most calls in flight during the current instant, so that a
// call starting right after another ended, in the same instant, sees the
// load that other call saw, whatever order the goroutines ran in.
type knee struct {
	k     int
	base  time.Duration
	start time.Time
	phase func(since time.Duration) (fail bool, factor time.Duration)
	check func(n int) // told the calls in flight, itself included, at every start (may be nil)

	mu       sync.Mutex
	inflight int       // guarded by mu
	instant  time.Time // guarded by mu
	atStart  int       // calls in flight as instant began; guarded by mu
	peak     int       // guarded by mu
	calls    int       // guarded by mu
}

// roll notes the calls in flight as a new instant begins (mu held).
func (d *knee) roll() {
	if now := time.Now(); !now.Equal(d.instant) {
		d.instant, d.atStart = now, d.inflight
	}
}

func (d *knee) call(_ context.Context, v int) (int, error) {
	d.mu.Lock()
	d.roll()
	d.inflight++
	d.calls++
	n, load := d.inflight, max(d.inflight, d.atStart)
	d.peak = max(d.peak, n)
	d.mu.Unlock()
	if d.check != nil {
		d.check(n)
	}
	fail, factor := false, time.Duration(1)
	if d.phase != nil {
		fail, factor = d.phase(time.Since(d.start))
	}
	lat := d.base
	switch {
	case fail:
	case load > d.k:
		lat = d.base * time.Duration(1+2*(load-d.k)) * factor
	default:
		lat *= factor
	}
	time.Sleep(lat)
	d.mu.Lock()
	d.roll()
	d.inflight--
	d.mu.Unlock()
	if fail {
		return 0, errOverload
	}
	return v, nil
}

func (d *knee) inFlight() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.inflight
}

// history records every change of a stage's limit (OnLimitChange) with
// the time it was told, and checks the in-flight counts of a knee against
// it: a call may start only when the calls in flight, itself included, do
// not exceed the largest limit in effect during the current instant of the
// bubble's clock (an increase is told before any call is admitted under
// it; a decrease may be told just after calls admitted under the old limit
// started in the same instant).
type history struct {
	mu         sync.Mutex
	cur        int         // the limit, as told; guarded by mu
	instant    time.Time   // the instant instMax is for; guarded by mu
	instMax    int         // the largest limit in effect during instant; guarded by mu
	changes    []limitAt   // guarded by mu
	outOfOrder int         // changes whose old was not the last new; guarded by mu
	over       []overLimit // calls started above the limit; guarded by mu
}

type limitAt struct {
	at    time.Duration // since start
	limit int
}

type overLimit struct {
	at             time.Time
	inflight, over int
}

func newHistory(initial int) *history {
	return &history{cur: initial, changes: []limitAt{{0, initial}}}
}

func (h *history) roll(now time.Time) {
	if !now.Equal(h.instant) {
		h.instant, h.instMax = now, h.cur
	}
}

// told is the stage's OnLimitChange.
func (h *history) told(start time.Time) func(old, new int) {
	return func(old, new int) {
		h.mu.Lock()
		defer h.mu.Unlock()
		now := time.Now()
		h.roll(now)
		if old != h.cur {
			h.outOfOrder++
		}
		h.cur = new
		h.instMax = max(h.instMax, new)
		h.changes = append(h.changes, limitAt{now.Sub(start), new})
	}
}

// check records a call that started with n calls in flight above the limit.
func (h *history) check(n int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	now := time.Now()
	h.roll(now)
	if n > h.instMax {
		h.over = append(h.over, overLimit{now, n, h.instMax})
	}
}

// between returns the lowest and highest limit in effect during [from, to).
func (h *history) between(from, to time.Duration) (lo, hi int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	cur := h.changes[0].limit
	lo, hi = 1<<31, 0
	for _, c := range h.changes[1:] {
		if c.at >= to {
			break
		}
		if c.at <= from {
			cur = c.limit
			continue
		}
		lo, hi = min(lo, cur), max(hi, cur)
		cur = c.limit
	}
	return min(lo, cur), max(hi, cur)
}

// settledAt returns the earliest time from from on after which the limit
// stayed within [lo, hi] until to.
func (h *history) settledAt(from, to time.Duration, lo, hi int) time.Duration {
	h.mu.Lock()
	defer h.mu.Unlock()
	at, cur := from, h.changes[0].limit
	for _, c := range h.changes[1:] {
		if c.at >= to {
			break
		}
		if c.at <= from {
			cur = c.limit
			continue
		}
		if cur < lo || cur > hi {
			at = c.at
		}
		cur = c.limit
	}
	if cur < lo || cur > hi {
		return to
	}
	return at
}
