package adaptive

import (
	"fmt"

	"github.com/troupe-go/troupe"
)

var (
	// ErrBadLimits is matched by the error New returns for limits that are
	// not 1 <= min <= max <= MaxLimit. It matches troupe.ErrBadConfig.
	ErrBadLimits = fmt.Errorf("%w: adaptive limits must satisfy 1 <= min <= max <= %d", troupe.ErrBadConfig, MaxLimit)
	// ErrBadInitial is matched by the error New returns for an initial
	// limit outside the min and the max. It matches troupe.ErrBadConfig.
	ErrBadInitial = fmt.Errorf("%w: adaptive initial limit must be between the min and the max", troupe.ErrBadConfig)
	// ErrBadBackoff is matched by the error New returns for a backoff
	// ratio not strictly between 0 and 1. It matches troupe.ErrBadConfig.
	ErrBadBackoff = fmt.Errorf("%w: adaptive backoff ratio must be greater than 0 and less than 1", troupe.ErrBadConfig)
	// ErrBadSamples is matched by the error New returns for a window of
	// fewer than 1 sample. It matches troupe.ErrBadConfig.
	ErrBadSamples = fmt.Errorf("%w: adaptive window needs at least 1 sample", troupe.ErrBadConfig)
	// ErrBadProbe is matched by the error New returns for a probe interval
	// of zero or less. It matches troupe.ErrBadConfig.
	ErrBadProbe = fmt.Errorf("%w: adaptive probe interval must be greater than zero", troupe.ErrBadConfig)
)
