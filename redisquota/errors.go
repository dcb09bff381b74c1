package redisquota

import (
	"errors"
	"fmt"
	"strings"

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

// bad is the error a constructor returns for a configuration it cannot use
// (a nil client, an empty key, a budget below 1, a bad option).
func bad(option string, value any, why string) error {
	return &troupe.ConfigError{Stage: "redisquota", Option: option, Value: value, Why: why}
}

// ErrHeldBack is TryAcquire's error while new leases are held back: Redis
// lost the leases of the calls running now (a restart without persistence,
// a failover), and gives none for one lease TTL, while those calls'
// renewals put theirs back. It matches ErrFull: Acquire waits it out.
var ErrHeldBack = fmt.Errorf("%w: held back for one lease TTL, Redis lost the leases (a restart or a failover)", ErrFull)

// ErrLeaseLost is the error a renewal reports (to the Observe option's
// observer) when it found its lease gone from Redis: expired, its
// renewals having failed for a whole TTL.
var ErrLeaseLost = errors.New("redisquota: the lease expired while its call ran")

// ErrSettingsDiffer is matched by the error of Limiter.Check and
// Budget.Check when processes share the key with settings other than
// this one's. The error is a *SettingsError.
var ErrSettingsDiffer = errors.New("redisquota: processes share the key with different settings")

// SettingsError names the settings this process uses for Key, and those
// other processes registered there (a rate and its burst; a budget and
// its lease TTL). It matches ErrSettingsDiffer. A plain value, safe for
// concurrent use.
type SettingsError struct {
	Key    string
	Mine   string
	Others []string
}

func (e *SettingsError) Error() string {
	return fmt.Sprintf("%v: %s has %s here, %s elsewhere", ErrSettingsDiffer, e.Key, e.Mine, strings.Join(e.Others, "; "))
}

// Is reports whether target is ErrSettingsDiffer.
func (e *SettingsError) Is(target error) bool { return target == ErrSettingsDiffer }
