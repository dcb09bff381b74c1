package actors

import (
	"time"

	"github.com/asynkron/protoactor-go/actor"
)

// Directive is what a Strategy decides for a failed stage.
type Directive int

const (
	// Restart restarts the stage: the requests it held get a
	// *troupe.RestartError, its queued requests are carried over.
	Restart Directive = iota
	// Stop stops the stage for good: every request it held or queued, and
	// every later reservation, gets a *troupe.ClosedError wrapping the cause.
	Stop
)

// Decision is a Strategy's verdict on one failure.
type Decision struct {
	Directive Directive
	// Delay postpones a Restart: the stage stays suspended meanwhile (its
	// queue waits; callers' contexts still bound their waits).
	Delay time.Duration
}

// Strategy decides the fate of a host's failed stages. Decide runs on the
// host's supervisor actor; it must not block.
type Strategy interface {
	// Decide is told about a failure of child; rs holds the child's failure
	// times, this one included.
	Decide(child *actor.PID, rs *actor.RestartStatistics, reason any) Decision
}

// intensity restarts a stage unless it failed more than max times within
// window: then it is stopped, instead of spinning.
type intensity struct {
	max    int
	window time.Duration
}

func (s intensity) Decide(_ *actor.PID, rs *actor.RestartStatistics, _ any) Decision {
	if rs.NumberOfFailures(s.window) > s.max {
		return Decision{Directive: Stop}
	}
	return Decision{Directive: Restart}
}

// Intensity returns a Strategy that restarts a failed stage at once, unless
// it failed more than max times within window, and stops it then. Package
// supervisor has strategies with backoff.
func Intensity(max int, window time.Duration) Strategy { return intensity{max: max, window: window} }

// DefaultStrategy is the root host's: restart, unless a stage failed more
// than 10 times in 10 seconds.
func DefaultStrategy() Strategy { return Intensity(10, 10*time.Second) }
