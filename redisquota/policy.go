package redisquota

import "fmt"

// Policy is what a Limiter or a Budget does while Redis is unreachable or
// slow (a round trip that fails or takes longer than the Timeout option).
// After such a failure, calls follow the policy at once, without a round
// trip, until Redis answers again: every Probe interval one call starts a
// probe (a round trip of its own, in the background). Either way no call
// waits on Redis for longer than Timeout, and every call gets an outcome.
//
//   - FailClosed (the default): a call that needs Redis fails with an
//     error matching ErrUnavailable. A budget's leases already held stay
//     held; a lease is released (in the background, once Redis answers) or
//     expires as usual.
//   - Fallback(n): the process takes a local share of the quota, n being
//     how many processes share it. A Limiter lets floor(Num/n) calls per
//     Per through, evenly spaced, with a burst of 1+(Burst-1)/n: however
//     the n processes' schedules line up, no span of Per holds more than
//     Num (plus the burst) of their calls together (Num/n each, unrounded,
//     would let n processes in step put up to twice Num in one span). Its
//     first local call comes one Per after the outage began, and Redis
//     counts the local calls of the last Per when it is back, so spans
//     across either end hold no more either. A Budget lends floor(Budget/n)
//     leases. A share that rounds down to nothing (Num or Budget below n)
//     is none: calls then wait for Redis. A slog warning says when the
//     fallback starts, an info when Redis is back. A process that falls
//     back while the others still reach Redis (a partition) adds its share
//     to the quota meanwhile; a budget's local leases are not in Redis, so
//     around the end of an outage the fleet may hold the budget plus them.
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
		return bad("Fallback", p.share, "need n >= 1")
	}
	return nil
}
