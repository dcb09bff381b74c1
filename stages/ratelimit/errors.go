package ratelimit

import "errors"

// ErrLimiter is matched by the outcome of a call whose Remote limiter
// failed to decide (Limiter.Allow returned an error, which the outcome
// wraps too).
var ErrLimiter = errors.New("ratelimit: the remote limiter failed")
