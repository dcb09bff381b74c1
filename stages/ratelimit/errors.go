package ratelimit

import (
	"errors"
	"fmt"

	"github.com/troupe-go/troupe"
)

// ErrBadRate is matched by the error New returns for a rate whose number of
// requests or period is not greater than zero. It matches
// troupe.ErrBadConfig.
var ErrBadRate = fmt.Errorf("%w: rate limit needs a number of requests and a period, both greater than zero", troupe.ErrBadConfig)

// ErrBadBurst is matched by the error New returns for a smooth mode whose
// burst is below 1, or so large that burst intervals overflow a
// time.Duration. It matches troupe.ErrBadConfig.
var ErrBadBurst = fmt.Errorf("%w: smooth rate limit burst must be at least 1 and its span must fit in a time.Duration", troupe.ErrBadConfig)

// ErrBadCapacity is matched by the error New returns for a mailbox capacity
// below 1. It matches troupe.ErrBadConfig.
var ErrBadCapacity = fmt.Errorf("%w: rate limit capacity must be between 0 (no limit of its own) and actors.MaxCapacity", troupe.ErrBadConfig)

// ErrBadRemote is matched by the error New returns for a Remote limiter it
// cannot use: nil, combined with Smooth, or one whose Rate is not the
// stage's. It matches troupe.ErrBadConfig.
var ErrBadRemote = fmt.Errorf("%w: bad remote rate limiter", troupe.ErrBadConfig)

// ErrBadAsks is matched by the error New returns for a MaxAsks out of
// range. It matches troupe.ErrBadConfig.
var ErrBadAsks = fmt.Errorf("%w: rate limit MaxAsks must be between 1 and %d", troupe.ErrBadConfig, maxAsks)

// ErrLimiter is matched by the outcome of a call whose Remote limiter
// failed to decide (Limiter.Allow returned an error, which the outcome
// wraps too).
var ErrLimiter = errors.New("ratelimit: the remote limiter failed")
