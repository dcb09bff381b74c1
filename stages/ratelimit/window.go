package ratelimit

import "time"

// window is the fixed-window limiter, tower's state machine:
// rem units are left in the window [start, start+per); rem == 0 is tower's
// Limited state. See limiter for the rules its methods follow.
type window struct {
	n     int
	per   time.Duration
	start time.Time // zero before the first call, so that it opens a window
	rem   int
}

func newWindow(r Rate) *window { return &window{n: r.Num, per: r.Per, rem: r.Num} }

func (w *window) rate() Rate { return Rate{Num: w.n, Per: w.per} }

func (w *window) end() time.Time { return w.start.Add(w.per) }

// roll opens the window that holds now, if the current one is over
// (now >= end). The new window starts:
//   - after a window with units left, at now, as in tower: a call made long
//     after the last one opens a fresh window;
//   - after a Limited window, at the old window's end, however late the
//     limiter noticed: scheduling delay is not lost from the rate
//     (tower starts at the moment the waiter wakes). When that end is a
//     period or more before now, the chained window would be over already:
//     the new one starts at now, as in the first case.
func (w *window) roll(now time.Time) {
	end := w.end()
	if now.Before(end) {
		return
	}
	start := now
	if w.rem == 0 && now.Before(end.Add(w.per)) {
		start = end
	}
	w.start, w.rem = start, w.n
}

// take spends one unit at now, opening a new window first when the current
// one is over. The call that spends the last unit gets it and leaves the
// window Limited; while Limited, take reports false and spends nothing.
func (w *window) take(now time.Time) bool { return w.takeN(now, 1) }

// takeN spends n units at now when n are left in the window that holds
// now; otherwise it spends nothing.
func (w *window) takeN(now time.Time, n int) bool {
	w.roll(now)
	if w.rem < n {
		return false
	}
	w.rem -= n
	return true
}

// readyAt is now when n units are left, or the window's end (a new window
// has n: n <= w.n).
func (w *window) readyAt(now time.Time, n int) time.Time {
	if end := w.end(); w.rem < n && now.Before(end) {
		return end
	}
	return now
}

func (w *window) maxCost() int { return w.n }

// limitedUntil reports whether the window is Limited at now, and its end.
func (w *window) takeSpare(now time.Time) bool {
	w.roll(now)
	if w.rem < 2 {
		return false
	}
	w.rem--
	return true
}

func (w *window) limitedUntil(now time.Time) (time.Time, bool) {
	end := w.end()
	return end, w.rem == 0 && now.Before(end)
}

// wake opens the next window when a Limited one is over (the alarm set for
// its end fired). A window with units left is not rolled here: the next
// call opens a fresh one at its own time.
func (w *window) wake(now time.Time) {
	if w.rem == 0 {
		w.roll(now)
	}
}

func (w *window) snapshot(time.Time) Snapshot {
	return Snapshot{Start: w.start, Until: w.end(), Remaining: w.rem}
}
