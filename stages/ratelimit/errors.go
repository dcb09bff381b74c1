package ratelimit

import (
	"errors"
	"fmt"
	"time"

	"github.com/troupe-go/troupe"
)

// ErrLimiter is matched by the outcome of a call whose Remote limiter
// failed to decide (Limiter.Allow returned an error, which the outcome
// wraps too).
var ErrLimiter = errors.New("ratelimit: the remote limiter failed")

// ErrLimited is matched by the error of a TryReserve refused because no
// unit is left now: a *LimitedError, which matches troupe.ErrFull too.
var ErrLimited = errors.New("ratelimit: no unit left now")

// LimitedError is TryReserve's refusal of a Limited stage: it says when
// the next unit comes. It matches ErrLimited and troupe.ErrFull.
//
// A plain value, safe for concurrent use.
type LimitedError struct {
	// RetryAfter is how long after the refusal the next unit comes (with
	// a Remote limiter, when the stage asks it again); 0 when unknown.
	RetryAfter time.Duration
}

func (e *LimitedError) Error() string {
	return fmt.Sprintf("ratelimit: no unit left now; the next in %v", e.RetryAfter)
}

// Is reports whether target is ErrLimited or troupe.ErrFull.
func (e *LimitedError) Is(target error) bool { return target == ErrLimited || target == troupe.ErrFull }
