package hedge

import (
	"fmt"

	"github.com/troupe-go/troupe"
)

// Configuration errors: New and Layer return an error matching one of these,
// and troupe.ErrBadConfig, for a bad option. Nothing is spawned then.
var (
	// ErrBadCapacity is matched by the error for a negative capacity or one
	// above stagekit.MaxCapacity.
	ErrBadCapacity = fmt.Errorf("hedge: capacity must be between 0 (no limit of its own) and the mailbox's maximum: %w", troupe.ErrBadConfig)
	// ErrNoDelay is matched by the error of a stage given neither Delay nor
	// Percentile: it would never know when to hedge.
	ErrNoDelay = fmt.Errorf("hedge: need a Delay, a Percentile, or both: %w", troupe.ErrBadConfig)
	// ErrBadDelay is matched by the error for a negative Delay.
	ErrBadDelay = fmt.Errorf("hedge: Delay must not be negative: %w", troupe.ErrBadConfig)
	// ErrBadPercentile is matched by the error for a percentile outside
	// (0, 100] (NaN included) or a minimum of samples below 1.
	ErrBadPercentile = fmt.Errorf("hedge: Percentile needs p in (0, 100] and minSamples of at least 1: %w", troupe.ErrBadConfig)
	// ErrBadWindow is matched by the error for a window span of zero or
	// less, or a sample count outside 1 to MaxSamples or below the
	// percentile's minimum of samples (hedging would never start).
	ErrBadWindow = fmt.Errorf("hedge: Window needs a positive span and between minSamples and MaxSamples samples: %w", troupe.ErrBadConfig)
	// ErrBadMaxHedges is matched by the error for a cap on hedges outside 1
	// to MaxHedgesLimit.
	ErrBadMaxHedges = fmt.Errorf("hedge: MaxHedges must be between 1 and %d: %w", MaxHedgesLimit, troupe.ErrBadConfig)
	// ErrBadBudget is matched by the error for a MaxRatio outside (0, 1000]
	// (NaN included) or too small to express, and for WithBudget(nil).
	ErrBadBudget = fmt.Errorf("hedge: bad budget: %w", troupe.ErrBadConfig)
	// ErrBadFunc is matched by the error for a nil Final or Clone function,
	// or one whose types are not the stage's request and response types.
	ErrBadFunc = fmt.Errorf("hedge: bad function: %w", troupe.ErrBadConfig)
)
