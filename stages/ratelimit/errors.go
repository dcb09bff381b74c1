package ratelimit

import (
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
