package stagekit

import (
	"fmt"
	"time"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/internal/opt"
)

// Directive is what a Strategy decides for a failed stage.
//
// A plain value, safe for concurrent use.
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
//
// A plain value, safe for concurrent use.
type Decision struct {
	Directive Directive
	// Delay postpones a Restart: the stage stays suspended meanwhile (its
	// queue waits; callers' contexts still bound their waits).
	Delay time.Duration
}

// Strategy decides the fate of a host's failed stages. Decide runs on the
// host's supervisor actor, under recover (a panic stops the stage); it
// must not block. A Strategy shared by several hosts must be safe for
// concurrent use.
type Strategy interface {
	Decide(f Failure) Decision
}

// Failure is one failure of a stage, as a Strategy sees it.
//
// A value, safe for concurrent use.
type Failure struct {
	// Stage names the failed stage (or a stage's own actor: "connection",
	// Reconnect's).
	Stage string
	// Reason is what it failed with: a *troupe.PanicError, or the error the
	// stage escalated.
	Reason any
	// within counts the stage's failures within a window; nil: this one only.
	within func(window time.Duration) int
}

// Within returns how many times the stage failed within the last window,
// this failure included.
func (f Failure) Within(window time.Duration) int {
	if f.within == nil {
		return 1
	}
	return f.within(window)
}

// NewFailure returns a Failure of stage with reason whose stage failed at
// times (this failure's included), for testing a Strategy.
func NewFailure(stage string, reason any, times ...time.Time) Failure {
	return Failure{Stage: stage, Reason: reason, within: func(window time.Duration) int {
		n := 0
		for _, t := range times {
			if time.Since(t) < window {
				n++
			}
		}
		return n
	}}
}

// intensity restarts a stage unless it failed more than max times within
// window: then it is stopped, instead of spinning.
type intensity struct {
	max    int
	window time.Duration
}

func (s intensity) Decide(f Failure) Decision {
	if f.Within(s.window) > s.max {
		return Decision{Directive: Stop}
	}
	return Decision{Directive: Restart}
}

// Intensity returns a Strategy that restarts a failed stage at once, unless
// it failed more than max times within window, and stops it then. Package
// supervisor has strategies with backoff. max must be at least 0 and window
// positive (NewHost checks).
func Intensity(max int, window time.Duration) Strategy { return intensity{max: max, window: window} }

// checkStrategy reports a strategy NewHost cannot run: nil, or an
// Intensity out of range.
func checkStrategy(s Strategy) error {
	switch s := s.(type) {
	case nil:
		return opt.Nil("actors.NewHost", "the strategy")
	case intensity:
		if s.max < 0 || s.window <= 0 {
			return &troupe.ConfigError{Stage: "actors.NewHost", Option: "Intensity", Value: fmt.Sprintf("(%d, %v)", s.max, s.window), Why: "need max >= 0 and a positive window"}
		}
	}
	return nil
}

// DefaultStrategy is the root host's: restart, unless a stage failed more
// than 10 times in 10 seconds.
func DefaultStrategy() Strategy { return Intensity(10, 10*time.Second) }
