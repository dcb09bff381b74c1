package filter

import (
	"errors"

	"github.com/troupe-go/troupe"
)

// ErrRejected is matched by the outcome of every request a filter rejected.
var ErrRejected = errors.New("filter: request rejected")

// RejectedError is the outcome of a request a filter rejected. It
// matches ErrRejected and unwraps to the error the predicate or check
// returned. It is never changed once made, so it is safe for concurrent
// use.
type RejectedError struct {
	// Err is the predicate's or check's error.
	Err error
}

func (e *RejectedError) Error() string { return "filter: request rejected: " + e.Err.Error() }

// Is reports whether target is ErrRejected.
func (e *RejectedError) Is(target error) bool { return target == ErrRejected }

// Unwrap returns the predicate's or check's error.
func (e *RejectedError) Unwrap() error { return e.Err }

// rejectReason says that a filter's rejection is one, for the observer
// (stagekit.Rejecter): the sync and async behaviors both use it.
func rejectReason(err error) troupe.Reason {
	if errors.Is(err, ErrRejected) {
		return troupe.ReasonFiltered
	}
	return troupe.ReasonOther
}
