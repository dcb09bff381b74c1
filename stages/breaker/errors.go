package breaker

import (
	"errors"
	"fmt"
	"time"
)

// ErrOpen is matched by the error of a call the breaker refused: it was
// open, or half-open with all its trial calls under way. The error itself
// is an *OpenError, which says when the breaker lets calls through again.
var ErrOpen = errors.New("breaker: circuit open")

// OpenError is the outcome of a call the breaker refused without reaching
// the service inside it. It matches ErrOpen. The breaker makes one per
// opening and hands the same value to every call it refuses meanwhile:
// treat it as read-only.
//
// A plain value, safe for concurrent use.
type OpenError struct {
	// State is the breaker's state when it refused the call: Open, or
	// HalfOpen when its trial calls were all under way.
	State State
	// RetryAt is when the open delay ends and the breaker lets trial calls
	// through. It is zero for a call refused in HalfOpen: the trial calls
	// under way decide, and the breaker closes or opens as soon as they
	// have.
	RetryAt time.Time
}

func (e *OpenError) Error() string {
	if e.State == HalfOpen {
		return "breaker: circuit half-open, its trial calls are under way"
	}
	return "breaker: circuit open until " + e.RetryAt.Format(time.RFC3339Nano)
}

// Is reports whether target is ErrOpen.
func (e *OpenError) Is(target error) bool { return target == ErrOpen }

// RetryAfter returns how long after now the breaker lets calls through
// again: RetryAt - now, or 0 when that has passed or RetryAt is zero.
func (e *OpenError) RetryAfter(now time.Time) time.Duration {
	if e.RetryAt.IsZero() {
		return 0
	}
	return max(e.RetryAt.Sub(now), 0)
}

// withPanic is the outcome of a call whose classifier or OnStateChange
// panicked with perr: the panic, and the call's own error if it had one.
func withPanic(perr, err error) error {
	if err == nil {
		return perr
	}
	return fmt.Errorf("%w (the call's outcome: %w)", perr, err)
}
