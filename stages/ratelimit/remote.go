package ratelimit

import (
	"context"
	"fmt"
	"time"

	"github.com/troupe-go/troupe/internal/opt"
)

// Limiter is a rate limit kept outside the stage: a quota that many
// processes share in a store, say (package redisquota's Limiter is one).
// With the Remote option the stage asks it for every unit instead of
// counting the rate itself.
//
// Allow asks for one unit for one call:
//
//   - ok true: the call may go now. A retryAfter greater than zero says
//     that the unit granted was the last one until then: the stage goes
//     Limited for that long without asking again.
//   - ok false: no unit is left; retryAfter is how long until the next
//     one. The stage goes Limited, its alarm set for then, keeps the call
//     (first in line) and asks again when the alarm fires. A retryAfter of
//     zero or less counts as a millisecond.
//   - err non-nil: the limiter could not decide (its store is unreachable,
//     say). The call is answered with an error matching ErrLimiter and
//     wrapping err; the stage does not go Limited. What to do when the
//     store is away (deny, or decide locally) is the limiter's choice.
//
// ctx is the call's context, cancelled too if the stage stops: Allow must
// return promptly once it ends, with any result. Allow runs on goroutines
// of the stage's own, never on its actor, for up to MaxAsks calls at once;
// a panic in it is the call's outcome (troupe.ErrPanic).
//
// Implementations must be safe for concurrent use.
type Limiter interface {
	Allow(ctx context.Context) (ok bool, retryAfter time.Duration, err error)
}

// Remote makes the stage ask l for every unit (see Limiter) instead of
// counting its rate in the process. The stage's rate is then l's: if l has
// a method Rate() Rate, New checks that it returns the rate it is given.
// Remote cannot be combined with Smooth (the limiter decides the shape).
// A nil l is an error matching troupe.ErrBadConfig.
func Remote(l Limiter) Option {
	return func(c *config) { c.remote, c.hasRemote = l, true }
}

// MaxAsks sets how many calls a stage with a Remote limiter may be asking
// it about at once (default DefaultAsks). Only one asks after the stage
// was Limited; the others join once an answer says units are left. n must
// be between 1 and 1024.
func MaxAsks(n int) Option { return func(c *config) { c.asks, c.asksSet = n, true } }

// DefaultAsks is how many calls a stage with a Remote limiter asks about at
// once, unless MaxAsks says otherwise.
const DefaultAsks = 4

// maxAsks bounds MaxAsks: each ask is a goroutine of the stage's own.
const maxAsks = 1024

// minRetry is how long a stage waits before asking again a remote limiter
// that said no without saying how long to wait.
const minRetry = time.Millisecond

// checkRemote checks the remote part of cfg for a stage of rate r.
func (c *config) checkRemote(r Rate) error {
	if !c.asksSet {
		c.asks = DefaultAsks
	}
	if c.asks < 1 || c.asks > maxAsks {
		return opt.Bad("ratelimit", "MaxAsks", c.asks, fmt.Sprintf("need 1 to %d", maxAsks))
	}
	if !c.hasRemote {
		return nil
	}
	switch {
	case c.remote == nil:
		return opt.Nil("ratelimit", "Remote")
	case c.smooth:
		return opt.Bad("ratelimit", "Remote", nil, "Smooth and Remote do not combine")
	}
	if rr, ok := c.remote.(interface{ Rate() Rate }); ok {
		if got := rr.Rate(); got != r {
			return opt.Bad("ratelimit", "Remote", fmt.Sprintf("%d per %v", got.Num, got.Per), fmt.Sprintf("the limiter's rate is not the stage's, %d per %v", r.Num, r.Per))
		}
	}
	return nil
}
