package actors

import (
	"time"

	"github.com/troupe-go/troupe/actors/stagekit"
)

// Strategy decides the fate of a host's failed stages (see System.NewHost
// and package supervisor). Decide runs on the host's supervisor actor,
// under recover (a panic stops the stage); it must not block.
//
// A Strategy shared by several hosts must be safe for concurrent use.
type Strategy interface {
	Decide(f Failure) Decision
}

// Failure is one failure of a stage, as a Strategy sees it: the stage's
// name, what it failed with, and (Within) how often it failed lately.
//
// A value, safe for concurrent use.
type Failure stagekit.Failure

// Within returns how many times the stage failed within the last window,
// this failure included.
func (f Failure) Within(window time.Duration) int { return stagekit.Failure(f).Within(window) }

// NewFailure returns a Failure of stage with reason whose stage failed at
// times (this failure's included), for testing a Strategy.
func NewFailure(stage string, reason any, times ...time.Time) Failure {
	return Failure(stagekit.NewFailure(stage, reason, times...))
}

// Decision is a Strategy's verdict on one failure.
//
// A plain value, safe for concurrent use.
type Decision struct {
	Directive Directive
	// Delay postpones a Restart: the stage stays suspended meanwhile (its
	// queue waits; callers' contexts still bound their waits).
	Delay time.Duration
}

// Directive is what a Strategy decides for a failed stage.
//
// A plain value, safe for concurrent use.
type Directive int

// The directives.
const (
	// Restart restarts the stage: the requests it held get a
	// *troupe.RestartError, its queued requests are carried over.
	Restart = Directive(stagekit.Restart)
	// Stop stops the stage for good: every request it held or queued, and
	// every later reservation, gets a *troupe.ClosedError wrapping the cause.
	Stop = Directive(stagekit.Stop)
)

// Intensity returns a Strategy that restarts a failed stage at once, unless
// it failed more than max times within window, and stops it then. Package
// supervisor has strategies with backoff.
func Intensity(max int, window time.Duration) Strategy {
	return fromKit{stagekit.Intensity(max, window)}
}

// DefaultStrategy is the root host's: restart, unless a stage failed more
// than 10 times in 10 seconds.
func DefaultStrategy() Strategy { return fromKit{stagekit.DefaultStrategy()} }

// fromKit is a stage kit's Strategy seen as one of this package's.
type fromKit struct{ s stagekit.Strategy }

func (k fromKit) Decide(f Failure) Decision {
	d := k.s.Decide(stagekit.Failure(f))
	return Decision{Directive: Directive(d.Directive), Delay: d.Delay}
}

// toKit is a Strategy of this package's seen as a stage kit's.
type toKit struct{ s Strategy }

func (k toKit) Decide(f stagekit.Failure) stagekit.Decision {
	d := k.s.Decide(Failure(f))
	return stagekit.Decision{Directive: stagekit.Directive(d.Directive), Delay: d.Delay}
}

// kitStrategy returns s as the stage kit takes it; nil stays nil.
func kitStrategy(s Strategy) stagekit.Strategy {
	switch s := s.(type) {
	case nil:
		return nil
	case fromKit:
		return s.s
	}
	return toKit{s}
}
