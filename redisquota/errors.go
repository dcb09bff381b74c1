package redisquota

import (
	"errors"
	"fmt"

	"github.com/troupe-go/troupe"
)

// ErrUnavailable is matched by the error of a call that needed Redis while
// it was unreachable or slow, under the FailClosed policy: the quota could
// not be checked, so the call did not go. The error is an
// *UnavailableError.
var ErrUnavailable = errors.New("redisquota: Redis unavailable, quota not checked")

// UnavailableError says which key could not be checked, and why. It
// matches ErrUnavailable, and unwraps to the cause (nil while Redis is
// considered down and was not asked).
//
// A plain value, safe for concurrent use.
type UnavailableError struct {
	Key string
	Err error
}

func (e *UnavailableError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("%v (%s; failing closed until it answers again)", ErrUnavailable, e.Key)
	}
	return fmt.Sprintf("%v (%s): %v", ErrUnavailable, e.Key, e.Err)
}

// Is reports whether target is ErrUnavailable.
func (e *UnavailableError) Is(target error) bool { return target == ErrUnavailable }

// Unwrap returns the cause.
func (e *UnavailableError) Unwrap() error { return e.Err }

// ErrFull is Budget.TryAcquire's error when every lease is taken.
var ErrFull = errors.New("redisquota: every lease of the budget is taken")

// ErrBadConfig is matched by the error a constructor returns for a
// configuration it cannot use (a nil client, an empty key, a budget below
// 1, a bad option). It matches troupe.ErrBadConfig.
var ErrBadConfig = fmt.Errorf("%w: redisquota", troupe.ErrBadConfig)
