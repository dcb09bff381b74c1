package redisquota

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/troupe-go/troupe"
)

// Option configures a Limiter or a Budget; the doc of each says which it
// applies to.
//
// Options are plain values, safe for concurrent use.
type Option func(*options)

type options struct {
	policy   Policy
	timeout  time.Duration
	probe    time.Duration
	log      *slog.Logger
	prefix   string
	check    time.Duration
	obs      troupe.Observer
	pipeline string
	burst    int           // Limiter
	ttl      time.Duration // Budget
	poll     time.Duration // Budget
}

// Defaults.
const (
	DefaultTimeout = 200 * time.Millisecond
	DefaultProbe   = time.Second
	DefaultTTL     = 10 * time.Second
	DefaultPoll    = 50 * time.Millisecond
	DefaultCheck   = 5 * time.Second
)

func defaults() options {
	return options{timeout: DefaultTimeout, probe: DefaultProbe, burst: 1, ttl: DefaultTTL, poll: DefaultPoll, prefix: DefaultPrefix, check: DefaultCheck, log: slog.Default()}
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
// it; then the next call starts a probe in the background (one at a time),
// and a probe that fails starts the interval again.
func Probe(d time.Duration) Option { return func(o *options) { o.probe = d } }

// Logger sets where the warnings go (default slog.Default()); a nil l is
// an error matching troupe.ErrBadConfig.
func Logger(l *slog.Logger) Option { return func(o *options) { o.log = l } }

// Prefix sets what the quota's Redis keys start with (default
// DefaultPrefix, "troupe:"): the keys are the prefix, the name in braces
// (a Redis Cluster hash tag), and a suffix each. The prefix may not hold
// braces.
func Prefix(p string) Option { return func(o *options) { o.prefix = p } }

// CheckEvery sets how often a Limiter or a Budget registers its settings
// next to the key and reads the other processes' (default DefaultCheck),
// and a Budget checks that Redis still has its leases (see Budget). It
// also happens at the first call and after every outage.
func CheckEvery(d time.Duration) Option { return func(o *options) { o.check = d } }

// Observe makes a Limiter or a Budget report to o, under the pipeline
// name pipeline: each round trip to Redis as an EventAccepted and an
// EventFinished (its latency; its error, when it failed), the outages and
// the hold-backs and disagreements as EventStateChanged, each call the
// fallback decided as EventFallback, each retry of a release as
// EventRetried. Their StageKind is StageKind; their Stage is the quota's
// key, followed by ":" and the operation (OpAcquire, ...) for round trips.
// The observer runs on the goroutine of the round trip or the call: it
// must be quick and safe for concurrent use; a panic in it is logged.
func Observe(o troupe.Observer, pipeline string) Option {
	return func(opts *options) { opts.obs, opts.pipeline = o, pipeline }
}

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
			return o, bad(fmt.Sprintf("option %d of %d", i+1, len(opts)), nil, "nil")
		}
		f(&o)
	}
	switch {
	case o.log == nil:
		return o, bad("Logger", nil, "nil")
	case o.timeout <= 0:
		return o, bad("Timeout", o.timeout, "must be positive")
	case o.probe < 0:
		return o, bad("Probe", o.probe, "must not be negative")
	case o.ttl < 3*time.Millisecond:
		return o, bad("LeaseTTL", o.ttl, "need at least 3ms")
	case o.poll <= 0:
		return o, bad("Poll", o.poll, "must be positive")
	case o.check <= 0:
		return o, bad("CheckEvery", o.check, "must be positive")
	case o.burst < 1:
		return o, bad("Burst", o.burst, "need at least 1")
	}
	if err := checkPrefix(o.prefix); err != nil {
		return o, err
	}
	return o, o.policy.check()
}
