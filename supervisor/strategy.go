package supervisor

import (
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/actors/stagekit"
	"github.com/troupe-go/troupe/backoff"
	"github.com/troupe-go/troupe/internal/opt"
)

// Backoff is an actors.Strategy: it restarts a failed stage after
// Delays.Delay(n), n the number of its failures within Window before this
// one, and stops it when it failed more than MaxRestarts times within
// Window. When the failure's reason is a Streak (Reconnect's connection
// failures are), n is the streak less one instead: the backoff starts over
// after the stage was healthy, while the intensity still counts every
// failure within Window. It counts what it decides. It is safe for
// concurrent use.
type Backoff struct {
	Delays      backoff.Exponential
	MaxRestarts int
	Window      time.Duration

	restarts, stops atomic.Int64
	onStop          func(f actors.Failure)
}

// NewBackoff returns a Backoff with delays and an intensity of maxRestarts
// within window. A bad configuration is an error matching
// troupe.ErrBadConfig.
func NewBackoff(delays backoff.Exponential, maxRestarts int, window time.Duration) (*Backoff, error) {
	if maxRestarts < 0 || window <= 0 {
		return nil, opt.Bad("supervisor.NewBackoff", "intensity", fmt.Sprintf("%d in %v", maxRestarts, window), "need maxRestarts >= 0 and a positive window")
	}
	if delays.Max == 0 {
		return nil, opt.Bad("supervisor.NewBackoff", "delays", nil, "not set (use backoff.New or backoff.GRPC)")
	}
	return &Backoff{Delays: delays, MaxRestarts: maxRestarts, Window: window}, nil
}

// DefaultBackoff returns gRPC's connection backoff (1 s, x1.6, jitter 0.2,
// at most 120 s) with an intensity of 10 restarts within 60 s.
func DefaultBackoff() *Backoff {
	// backoff.GRPC's values, as a literal: those are valid, so there is no
	// error to discard.
	grpc := backoff.Exponential{Min: time.Second, Max: 120 * time.Second, Multiplier: 1.6, Jitter: backoff.Ratio(0.2)}
	return &Backoff{Delays: grpc, MaxRestarts: 10, Window: time.Minute}
}

// Decide implements actors.Strategy.
func (b *Backoff) Decide(f actors.Failure) actors.Decision {
	n := f.Within(b.Window) // this failure included
	reason := f.Reason
	if n > b.MaxRestarts {
		b.stops.Add(1)
		if b.onStop != nil {
			b.onStop(f)
		}
		return actors.Decision{Directive: actors.Stop}
	}
	b.restarts.Add(1)
	return actors.Decision{Directive: actors.Restart, Delay: b.Delays.Delay(attempt(n, reason))}
}

// Streak is implemented by a failure reason that counts the failures in a
// row, this one included, since its stage was last healthy: Reconnect's
// connection actor fails with one (NOTE: it implements this method set
// without importing this package), whose count a connection that stayed up
// resets, as gRPC's connection backoff does.
//
// Implementations must be safe for concurrent use.
type Streak interface {
	error
	// Streak returns the failures in a row, at least 1.
	Streak() int
}

// attempt returns the index of the delay for a failure: the failures
// before it within the window (n counts this one), or its streak less one
// when the reason is a Streak. The reason's methods run under stagekit.Guard:
// if they panic, the window decides.
func attempt(n int, reason any) int {
	err, ok := reason.(error)
	if !ok {
		return n - 1
	}
	k, perr := stagekit.Guard1("supervisor: failure reason", func() (int, error) {
		var s Streak
		if errors.As(err, &s) {
			return s.Streak(), nil
		}
		return n, nil
	})
	if perr != nil || k < 1 {
		return n - 1
	}
	return k - 1
}

// Restarts reports how many restarts it decided.
func (b *Backoff) Restarts() int64 { return b.restarts.Load() }

// Stops reports how many stages it stopped for failing too often.
func (b *Backoff) Stops() int64 { return b.stops.Load() }
