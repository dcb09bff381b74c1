package ratelimit

import (
	"context"
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
// unit is left now, and of a caller refused at once because its turn
// would come too late: a *LimitedError, which matches troupe.ErrFull too.
var ErrLimited = errors.New("ratelimit: no unit left now")

// LimitedError is the refusal of a Limited stage: TryReserve's, or that of
// a caller whose turn would come after its context's deadline (it then
// matches context.DeadlineExceeded too, as x/time/rate's Wait refuses at
// once) or later than MaxWait. It says when the next unit, or the
// caller's turn, comes. It matches ErrLimited and troupe.ErrFull.
//
// A plain value, safe for concurrent use.
type LimitedError struct {
	// RetryAfter is how long after the refusal the next unit comes (with
	// a Remote limiter, when the stage asks it again), or the caller's
	// turn; 0 when unknown.
	RetryAfter time.Duration

	deadline bool // the caller's deadline ends before its turn
}

func (e *LimitedError) Error() string {
	if e.deadline {
		return fmt.Sprintf("ratelimit: the deadline ends before the turn, in %v", e.RetryAfter)
	}
	return fmt.Sprintf("ratelimit: no unit left now; the next in %v", e.RetryAfter)
}

// Is reports whether target is ErrLimited or troupe.ErrFull, or
// context.DeadlineExceeded for a caller whose deadline ends before its
// turn.
func (e *LimitedError) Is(target error) bool {
	return target == ErrLimited || target == troupe.ErrFull || e.deadline && target == context.DeadlineExceeded
}
