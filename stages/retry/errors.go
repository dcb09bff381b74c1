package retry

import (
	"errors"
	"fmt"
)

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
