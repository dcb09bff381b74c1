package supervisor

import (
	"fmt"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/stages/retry/backoff"
)

// Backoff is an actors.Strategy: it restarts a failed stage after
// Delays.Delay(n), n the number of its failures within Window before this
// one, and stops it when it failed more than MaxRestarts times within
// Window. It counts what it decides. It is safe for concurrent use.
type Backoff struct {
	Delays      backoff.Exponential
	MaxRestarts int
	Window      time.Duration

	restarts, stops atomic.Int64
	onStop          func(child *actor.PID, reason any)
}

// NewBackoff returns a Backoff with gRPC's connection backoff and an
// intensity of maxRestarts within window.
func NewBackoff(delays backoff.Exponential, maxRestarts int, window time.Duration) (*Backoff, error) {
	if maxRestarts < 0 || window <= 0 {
		return nil, fmt.Errorf("%w: need maxRestarts >= 0 and window > 0", actors.ErrBadConfig)
	}
	if delays.Max == 0 {
		return nil, fmt.Errorf("%w: backoff delays not set (use backoff.New or backoff.GRPC)", actors.ErrBadConfig)
	}
	return &Backoff{Delays: delays, MaxRestarts: maxRestarts, Window: window}, nil
}

// DefaultBackoff returns gRPC's connection backoff (1 s, x1.6, jitter 0.2,
// at most 120 s) with an intensity of 10 restarts within 60 s.
func DefaultBackoff() *Backoff {
	b, _ := NewBackoff(backoff.GRPC(), 10, time.Minute)
	return b
}

// Decide implements actors.Strategy.
func (b *Backoff) Decide(child *actor.PID, rs *actor.RestartStatistics, reason any) actors.Decision {
	n := rs.NumberOfFailures(b.Window) // this failure included
	if n > b.MaxRestarts {
		b.stops.Add(1)
		if b.onStop != nil {
			b.onStop(child, reason)
		}
		return actors.Decision{Directive: actors.Stop}
	}
	b.restarts.Add(1)
	return actors.Decision{Directive: actors.Restart, Delay: b.Delays.Delay(n - 1)}
}

// Restarts reports how many restarts it decided.
func (b *Backoff) Restarts() int64 { return b.restarts.Load() }

// Stops reports how many stages it stopped for failing too often.
func (b *Backoff) Stops() int64 { return b.stops.Load() }
