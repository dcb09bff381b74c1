package redisquota

import (
	"fmt"
	"log/slog"
	"time"
)

// Option configures a Limiter or a Budget; the doc of each says which it
// applies to.
//
// Options are plain values, safe for concurrent use.
type Option func(*options)

type options struct {
	policy  Policy
	timeout time.Duration
	probe   time.Duration
	log     *slog.Logger
	burst   int           // Limiter
	ttl     time.Duration // Budget
	poll    time.Duration // Budget
}

// Defaults.
const (
	DefaultTimeout = 200 * time.Millisecond
	DefaultProbe   = time.Second
	DefaultTTL     = 10 * time.Second
	DefaultPoll    = 50 * time.Millisecond
)

func defaults() options {
	return options{timeout: DefaultTimeout, probe: DefaultProbe, burst: 1, ttl: DefaultTTL, poll: DefaultPoll, log: slog.Default()}
}

// OnUnavailable sets what happens while Redis is unreachable or slow
// (default FailClosed; see Policy).
func OnUnavailable(p Policy) Option { return func(o *options) { o.policy = p } }

// Timeout bounds each round trip to Redis (default DefaultTimeout): one
// that takes longer counts as Redis unavailable. The caller's own context
// bounds it too.
func Timeout(d time.Duration) Option { return func(o *options) { o.timeout = d } }

// Probe sets how long Redis is left alone after a failed round trip
// (default DefaultProbe): calls meanwhile follow the policy without asking
// it.
func Probe(d time.Duration) Option { return func(o *options) { o.probe = d } }

// Logger sets where the warnings go (default slog.Default()); a nil l is
// an error matching ErrBadConfig.
func Logger(l *slog.Logger) Option { return func(o *options) { o.log = l } }

// Burst lets a Limiter grant up to n calls at once after a quiet spell
// (default 1: calls are at least Per/Num apart, so any span of Per holds
// at most Num of them).
func Burst(n int) Option { return func(o *options) { o.burst = n } }

// LeaseTTL sets how long a Budget's lease outlives its process's last
// renewal (default DefaultTTL): a crashed process's leases are free again
// within it. A running call's lease is renewed every third of it.
func LeaseTTL(d time.Duration) Option { return func(o *options) { o.ttl = d } }

// Poll sets the longest wait between two tries of a Budget whose leases
// are all taken (default DefaultPoll); the waits start at a twentieth of
// it and double.
func Poll(d time.Duration) Option { return func(o *options) { o.poll = d } }

func newOptions(opts []Option) (options, error) {
	o := defaults()
	for i, f := range opts {
		if f == nil {
			return o, fmt.Errorf("%w: option %d of %d is nil", ErrBadConfig, i+1, len(opts))
		}
		f(&o)
	}
	switch {
	case o.log == nil:
		return o, fmt.Errorf("%w: Logger(nil)", ErrBadConfig)
	case o.timeout <= 0, o.probe < 0, o.ttl < 3*time.Millisecond, o.poll <= 0:
		return o, fmt.Errorf("%w: need Timeout > 0, Probe >= 0, LeaseTTL >= 3ms, Poll > 0", ErrBadConfig)
	case o.burst < 1:
		return o, fmt.Errorf("%w: Burst must be at least 1, got %d", ErrBadConfig, o.burst)
	}
	return o, o.policy.check()
}
