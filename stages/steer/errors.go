package steer

import (
	"errors"
	"fmt"
)

// ErrNoRoute is matched by the outcome of a request for which the picker
// returned an index out of range: no service was called.
var ErrNoRoute = errors.New("steer: picked index out of range")

// NoRouteError is the outcome of a request for which the picker returned
// an index out of range. It matches ErrNoRoute. A plain value, safe for
// concurrent use.
type NoRouteError struct {
	// Index is what the picker returned.
	Index int
	// Services is how many services the Steer has.
	Services int
}

func (e *NoRouteError) Error() string {
	return fmt.Sprintf("steer: picked index %d of %d services", e.Index, e.Services)
}

// Is reports whether target is ErrNoRoute.
func (e *NoRouteError) Is(target error) bool { return target == ErrNoRoute }
