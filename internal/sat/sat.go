// Package sat is troupe's saturating arithmetic on durations and counts:
// a sum or product that would leave the int64 range stops at its end
// instead of wrapping around, so that a timeout, a backoff, an open delay
// or a hedge delay up to math.MaxInt64 never turns into a time in the past.
// Every stage that adds or multiplies durations (or the counts a window
// keeps) does it here. The functions are pure, safe for concurrent use, and
// small enough to be inlined on a request's path.
package sat

import (
	"math"
	"time"
)

// Add returns x+y, saturated to the range of an int64 (math.MinInt64 to
// math.MaxInt64).
func Add[T ~int64](x, y T) T {
	s := x + y
	switch {
	case x > 0 && y > 0 && s < 0:
		return math.MaxInt64
	case x < 0 && y < 0 && s >= 0:
		return math.MinInt64
	}
	return s
}

// Mul returns x*y for x, y >= 0, saturated at math.MaxInt64 (a negative
// operand counts as 0).
func Mul[T ~int64](x, y T) T {
	if x <= 0 || y <= 0 {
		return 0
	}
	if y > math.MaxInt64/x {
		return math.MaxInt64
	}
	return x * y
}

// Scale returns d times f, rounded toward zero and saturated to the
// duration range; a NaN f gives 0.
func Scale(d time.Duration, f float64) time.Duration {
	p := float64(d) * f
	switch {
	case p != p: // NaN
		return 0
	case p >= math.MaxInt64: // float64(math.MaxInt64) is 2^63: the first value out of range
		return math.MaxInt64
	case p <= math.MinInt64:
		return math.MinInt64
	}
	return time.Duration(p)
}
