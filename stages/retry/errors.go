package retry

import (
	"errors"
	"fmt"

	"github.com/troupe-go/troupe"
)

// ErrBadCapacity is matched by the error for a negative capacity or one above actors.MaxCapacity; it matches
// troupe.ErrBadConfig.
var ErrBadCapacity = fmt.Errorf("retry: capacity must be between 0 (no limit of its own) and actors.MaxCapacity: %w", troupe.ErrBadConfig)

// errBadMax is returned by New and Layer for an Attempts policy (or a
// policy that embeds one) whose Max is negative.
var errBadMax = fmt.Errorf("retry: Attempts.Max must not be negative: %w", troupe.ErrBadConfig)

// ErrSessionOver ends a session whose request's outcome was delivered, or
// whose caller gave up, while it waited to retry: nobody sees it.
var ErrSessionOver = errors.New("retry: nobody waits for this session any more")

// ErrExhausted is matched by the error Attempts returns for a failure it
// would retry when no retry is left.
var ErrExhausted = errors.New("retry: attempts exhausted")

// ExhaustedError is the outcome of a session that ran out of attempts. It
// matches ErrExhausted and unwraps to the last attempt's error.
//
// A plain value, safe for concurrent use.
type ExhaustedError struct {
	Attempts int
	Err      error
}

func (e *ExhaustedError) Error() string {
	return fmt.Sprintf("retry: %d attempts failed, the last with: %v", e.Attempts, e.Err)
}

// Is reports whether target is ErrExhausted.
func (e *ExhaustedError) Is(target error) bool { return target == ErrExhausted }

// Unwrap returns the last attempt's error.
func (e *ExhaustedError) Unwrap() error { return e.Err }
