package stagekit

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultDroppedPermitCheck is how long a caller waits for a stage's slot
// before the stage asks the garbage collector to reclaim the permits its
// users dropped without Call or Release (see WithDroppedPermitCheck).
const DefaultDroppedPermitCheck = time.Second

// WithDroppedPermitCheck sets how long a caller may wait for a slot of one
// of the system's stages that has a permit out, issued (Reserve) and neither
// called nor released, before the stage runs the garbage collector so that a dropped
// permit's capacity comes back: a dropped permit blocks the next caller for
// about d (plus one collection), and a caller already waiting when it was
// dropped for at most about 2d, whenever the collector would have run by
// itself: a waiting caller's check repeats every d. A permit is reclaimed
// once it, and the permits issued alongside it (they are made in blocks of
// 64), are unreachable. d <= 0 turns the check
// off: dropped permits then come back when the collector happens to run.
// Collections started this way are at most one per d in the process.
func WithDroppedPermitCheck(d time.Duration) Option {
	return func(s *System) { s.droppedCheck = d }
}

// gcGate lets one collection per interval through, process-wide.
var gcGate struct {
	mu   sync.Mutex
	last time.Time // guarded by mu
}

// forcedCollections counts the collections collectDropped ran (tests).
var forcedCollections atomic.Int64

// collectDropped runs the garbage collector, unless one was started this
// way less than every ago; it blocks until the collection is done (the
// reclaimed permits' cleanups run soon after, on the runtime's goroutine).
// It returns how long until the next collection may start this way: every
// when it collected, what is left of the interval when it did not. A clock
// that reads earlier than the last collection (another synctest bubble's)
// does not hold the next one back.
func collectDropped(every time.Duration) (next time.Duration) {
	gcGate.mu.Lock()
	now := time.Now()
	if !gcGate.last.IsZero() && !now.Before(gcGate.last) && now.Sub(gcGate.last) < every {
		next = every - now.Sub(gcGate.last)
		gcGate.mu.Unlock()
		return next
	}
	gcGate.last = now
	gcGate.mu.Unlock()
	forcedCollections.Add(1)
	runtime.GC()
	return every
}

// droppedCheck is one waiting caller's dropped-permit check: each time the
// caller has waited d more, a collection if the stage has a permit out (at
// most one per d in the process). It repeats while the caller waits: a
// permit may be dropped after the caller began to wait, or still be
// reachable at the first check (a permit of its block in use); a single
// check would leave such a caller waiting until the collector ran by
// itself. Stop and the timer's function meet under mu; the caller that
// armed the check owns it and stops it once, when its wait is over.
type droppedCheck struct {
	mu      sync.Mutex
	t       *time.Timer // set under mu before the timer can fire
	stopped bool        // guarded by mu
}

// Stop ends the check: the caller's wait is over.
func (c *droppedCheck) Stop() {
	c.mu.Lock()
	c.stopped = true
	c.t.Stop()
	c.mu.Unlock()
}

// droppedWatch arms the dropped-permit check for a caller that is about to
// wait for a slot of s; stop it once the wait is over. It returns nil when
// the check is off.
//
// Only a permit can be dropped, so a stage that never issued one (the usual
// case when callers reserve and call in one step) arms nothing: a loaded
// stage's waiting callers cost no timer. And only a permit issued and
// neither called nor released can have been: each time the caller has
// waited d, the stage collects only if its permit source has one
// outstanding (PermitSource.Outstanding, a scan made then, so that the
// permit path pays nothing for it). A stage whose permits were all used
// forces no collection however long its callers wait.
func (s *Stage[Req, Res]) droppedWatch() *droppedCheck {
	d := s.host.sys.droppedCheck
	if d <= 0 || !s.permits.Issued() {
		return nil
	}
	c := &droppedCheck{}
	c.mu.Lock()
	c.t = time.AfterFunc(d, func() {
		next := d
		if s.permits.Outstanding() {
			next = collectDropped(d)
		}
		c.mu.Lock()
		if !c.stopped {
			c.t.Reset(next)
		}
		c.mu.Unlock()
	})
	c.mu.Unlock()
	return c
}

// PermitDropped reports a permit of the stage that was dropped unused and
// reclaimed by the garbage collector, through the system's logger.
func (r *reservation[Req, Res]) PermitDropped() {
	r.host.sys.logger.Warn("troupe: permit dropped without Call or Release; its capacity was reclaimed", "stage", r.name)
}
