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
// about d (plus one collection), whenever the collector would have run by
// itself. A permit is reclaimed once it, and the permits issued alongside it
// (they are made in blocks of 64), are unreachable. d <= 0 turns the check
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
// A clock that reads earlier than the last collection (another synctest
// bubble's) does not hold the next one back.
func collectDropped(every time.Duration) {
	gcGate.mu.Lock()
	now := time.Now()
	if !gcGate.last.IsZero() && !now.Before(gcGate.last) && now.Sub(gcGate.last) < every {
		gcGate.mu.Unlock()
		return
	}
	gcGate.last = now
	gcGate.mu.Unlock()
	forcedCollections.Add(1)
	runtime.GC()
}

// droppedWatch arms the dropped-permit check for a caller that is about to
// wait for a slot of s; stop it once the wait is over. It returns nil when
// the check is off.
//
// Only a permit can be dropped, so a stage that never issued one (the usual
// case when callers reserve and call in one step) arms nothing: a loaded
// stage's waiting callers cost no timer. And only a permit issued and
// neither called nor released can have been: when the caller has waited
// d, the stage collects only if its permit source has one outstanding
// (PermitSource.Outstanding, a scan made then, so that the permit path
// pays nothing for it). A stage whose permits were all used forces no
// collection however long its callers wait.
func (s *Stage[Req, Res]) droppedWatch() *time.Timer {
	d := s.host.sys.droppedCheck
	if d <= 0 || !s.permits.Issued() {
		return nil
	}
	return time.AfterFunc(d, func() {
		if s.permits.Outstanding() {
			collectDropped(d)
		}
	})
}

// PermitDropped reports a permit of the stage that was dropped unused and
// reclaimed by the garbage collector, through the system's logger.
func (r *reservation[Req, Res]) PermitDropped() {
	r.host.sys.logger.Warn("troupe: permit dropped without Call or Release; its capacity was reclaimed", "stage", r.name)
}
