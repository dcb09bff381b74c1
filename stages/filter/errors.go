package filter

import (
	"errors"
	"fmt"

	"github.com/troupe-go/troupe"
)

// ErrRejected is matched by the outcome of every request a filter rejected.
var ErrRejected = errors.New("filter: request rejected")

// ErrNilCheck is returned by the constructors for a nil predicate or check;
// it matches troupe.ErrBadConfig.
var ErrNilCheck = fmt.Errorf("%w: filter predicate or check is nil", troupe.ErrBadConfig)

// ErrBadCapacity is matched by the error for a negative capacity or one above actors.MaxCapacity; it matches
// troupe.ErrBadConfig.
var ErrBadCapacity = fmt.Errorf("%w: filter capacity must be between 0 (no limit of its own) and actors.MaxCapacity", troupe.ErrBadConfig)

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
