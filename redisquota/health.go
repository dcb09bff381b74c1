package redisquota

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"
)

// health tracks whether Redis answers, for one Limiter or Budget: after a
// failed round trip it is down (calls skip Redis, and follow the policy at
// once) until a round trip succeeds; every probe interval a call starts a
// probe on a goroutine of its own. The first failure and the first
// success after it are logged and reported. It counts the round trips and
// their latencies for Stats. It is safe for concurrent use.
type health struct {
	key     string // never changed
	policy  Policy // never changed
	probe   time.Duration
	timeout time.Duration
	log     *slog.Logger
	rep     *reporter // nil: no observer
	base    time.Time // never changed: times below are nanoseconds since it (monotonic)
	// probeFn is the probe's round trip (a sync); set by the constructor,
	// then never changed.
	probeFn func(context.Context) error

	downUntil atomic.Int64 // no probe before then
	probing   atomic.Bool  // a probe runs
	down      atomic.Bool  // in an outage: set by the first failure, cleared by a success
	outages   atomic.Int64 // outages begun: a new one makes the fallback start afresh

	trips    atomic.Int64 // round trips
	failures atomic.Int64 // failed round trips
	answered atomic.Int64 // round trips Redis answered, and their latency:
	total    atomic.Int64 // ns, summed
	last     atomic.Int64 // ns
	slowest  atomic.Int64 // ns
	local    atomic.Int64 // calls decided locally
}

func newHealth(key string, o options) *health {
	return &health{key: key, policy: o.policy, probe: o.probe, timeout: o.timeout, log: o.log, rep: newReporter(o, key), base: time.Now()}
}

func (h *health) now() int64 { return int64(time.Since(h.base)) }

// skip reports whether Redis is down: calls then follow the policy at
// once, without a round trip. Once the probe interval has passed since
// the last failure, the call that sees it starts a probe (one at a time),
// on a goroutine of its own, bounded by the Timeout: its success ends the
// outage, its failure starts the interval again.
func (h *health) skip() bool {
	if !h.down.Load() {
		return false
	}
	if h.now() >= h.downUntil.Load() && h.probing.CompareAndSwap(false, true) {
		go func() {
			defer h.probing.Store(false)
			_ = h.probeFn(context.Background()) // bounded by the Timeout option
		}()
	}
	return true
}

// downState is the state an outage puts the quota in.
func (h *health) downState() string {
	if h.policy.fallback {
		return StateFallback
	}
	return StateDown
}

// failed records a failed round trip.
func (h *health) failed(err error) {
	h.failures.Add(1)
	h.downUntil.Store(h.now() + int64(h.probe))
	if h.down.CompareAndSwap(false, true) {
		h.outages.Add(1)
		h.log.Warn("redisquota: Redis unavailable", "key", h.key, "policy", h.policy.String(), "err", err)
		h.rep.changed(StateUp, h.downState(), err)
	}
}

// ok records a round trip that Redis answered in took.
func (h *health) ok(took time.Duration) {
	h.answered.Add(1)
	h.total.Add(int64(took))
	h.last.Store(int64(took))
	for s := h.slowest.Load(); int64(took) > s && !h.slowest.CompareAndSwap(s, int64(took)); s = h.slowest.Load() {
	}
	if h.down.Load() && h.down.CompareAndSwap(true, false) {
		h.log.Info("redisquota: Redis answers again", "key", h.key)
		h.rep.changed(h.downState(), StateUp, nil)
	}
}

// decidedLocally counts a call the fallback decided, and reports it.
func (h *health) decidedLocally(ctx context.Context, why error) {
	h.local.Add(1)
	h.rep.fellBack(ctx, why)
}

// roundTrip runs fn, the round trip of op, with a context bounded by
// timeout, and records how it went. It returns fn's error, or ctx's own
// error when the caller's context ended first (not counted against
// Redis).
func (h *health) roundTrip(ctx context.Context, op string, timeout time.Duration, fn func(context.Context) error) error {
	h.trips.Add(1)
	h.rep.started(ctx, op)
	start := time.Now()
	rctx, cancel := context.WithTimeout(ctx, timeout)
	err := fn(rctx)
	cancel()
	took := time.Since(start)
	switch {
	case err == nil:
		h.ok(took)
	case ctx.Err() != nil:
		err = ctx.Err()
	default:
		h.failed(err)
	}
	h.rep.finished(ctx, op, took, err)
	return err
}

// fill writes the figures health keeps into s.
func (h *health) fill(s *Stats) {
	s.Down = h.down.Load()
	s.RoundTrips, s.Failures, s.Outages = h.trips.Load(), h.failures.Load(), h.outages.Load()
	s.Fallbacks = h.local.Load()
	s.LastLatency, s.MaxLatency = time.Duration(h.last.Load()), time.Duration(h.slowest.Load())
	if n := h.answered.Load(); n > 0 {
		s.MeanLatency = time.Duration(h.total.Load() / n)
	}
}
