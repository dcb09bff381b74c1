package redisquota

import "fmt"

// Policy is what a Limiter or a Budget does while Redis is unreachable or
// slow (a round trip that fails or takes longer than the Timeout option).
// After such a failure, Redis is left alone for the Probe interval: calls
// meanwhile follow the policy at once, without a round trip; then the next
// call asks Redis again. Either way no call waits on Redis for longer than
// Timeout, and every call gets an outcome.
//
//   - FailClosed (the default): a call that needs Redis fails with an
//     error matching ErrUnavailable. A budget's leases already held stay
//     held; a lease is released or expires as usual.
//   - Fallback(n): the process takes a local share, 1/n, of the quota (n is
//     how many processes share it): a Limiter lets Num calls per n*Per
//     through, evenly spaced; a Budget lends Budget/n leases (rounded down:
//     none when the budget is below n; calls then wait for Redis). A slog
//     warning says when the fallback starts, an info when Redis is back.
//     The fleet stays within the quota while every process falls back;
//     around the switch it may exceed it by what was counted on both sides.
//
// A Policy is a plain value, safe for concurrent use.
type Policy struct {
	fallback bool
	share    int // the n of Fallback(n)
}

// FailClosed is the policy that fails calls while Redis is unavailable.
var FailClosed = Policy{}

// Fallback returns the policy that falls back to a local share of the
// quota, 1/n, while Redis is unavailable. n must be at least 1.
func Fallback(n int) Policy { return Policy{fallback: true, share: n} }

func (p Policy) String() string {
	if !p.fallback {
		return "fail closed"
	}
	return fmt.Sprintf("fall back to 1/%d of the quota", p.share)
}

func (p Policy) check() error {
	if p.fallback && p.share < 1 {
		return fmt.Errorf("%w: Fallback needs n >= 1, got %d", ErrBadConfig, p.share)
	}
	return nil
}
