package timeout

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// ErrTimeout is matched by the error of a call that timed out.
var ErrTimeout = errors.New("timeout: request timed out")

// Error is the outcome of a call that timed out. It matches ErrTimeout and
// unwraps to context.DeadlineExceeded.
//
// A plain value, safe for concurrent use.
type Error struct {
	// After is the stage's timeout.
	After time.Duration
}

func (e *Error) Error() string { return fmt.Sprintf("timeout: request timed out after %v", e.After) }

// Is reports whether target is ErrTimeout.
func (e *Error) Is(target error) bool { return target == ErrTimeout }

// Unwrap returns context.DeadlineExceeded.
func (e *Error) Unwrap() error { return context.DeadlineExceeded }
