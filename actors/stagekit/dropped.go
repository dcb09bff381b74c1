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
// of the system's stages that has issued permits (Reserve) before the stage runs the garbage collector so that a dropped
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

// collectDropped runs the garbage collector, unless one was started this
// way less than every ago; it blocks until the collection is done (the
// reclaimed permits' cleanups run soon after, on the runtime's goroutine).
func collectDropped(every time.Duration) {
	gcGate.mu.Lock()
	now := time.Now()
	if !gcGate.last.IsZero() && now.Sub(gcGate.last) < every {
		gcGate.mu.Unlock()
		return
	}
	gcGate.last = now
	gcGate.mu.Unlock()
	runtime.GC()
}

// droppedWatch arms the dropped-permit check for a caller that is about to
// wait for a slot of s; stop it once the wait is over. It returns nil when
// the check is off.
//
// Only permits can be dropped, so a stage that never issued one (the usual
// case when callers reserve and call in one step) arms nothing: a loaded
// stage's waiting callers cost no timer.
func (s *Stage[Req, Res]) droppedWatch() *time.Timer {
	d := s.host.sys.droppedCheck
	if d <= 0 || !s.issued.Load() {
		return nil
	}
	return time.AfterFunc(d, func() { collectDropped(d) })
}

// issuedPermits records that a stage issued a permit: set once, then only
// read, so it costs the permit path a shared load.
type issuedPermits = atomic.Bool

// PermitDropped reports a permit of the stage that was dropped unused and
// reclaimed by the garbage collector, through the system's logger.
func (r *reservation[Req, Res]) PermitDropped() {
	r.host.sys.logger.Warn("troupe: permit dropped without Call or Release; its capacity was reclaimed", "stage", r.name)
}
