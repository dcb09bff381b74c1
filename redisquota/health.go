package redisquota

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"
)

// health tracks whether Redis answers, for one Limiter or Budget: after a
// failed round trip it is down for the probe interval (calls skip Redis),
// and the first failure and the first success after it are logged. It is
// safe for concurrent use.
type health struct {
	key    string // never changed
	policy Policy // never changed
	probe  time.Duration
	log    *slog.Logger
	base   time.Time // never changed: times below are nanoseconds since it (monotonic)

	downUntil atomic.Int64 // Redis is not asked before then
	down      atomic.Bool  // in an outage: set by the first failure, cleared by a success
	failures  atomic.Int64 // failed round trips (for Stats)
}

func newHealth(key string, o options) *health {
	return &health{key: key, policy: o.policy, probe: o.probe, log: o.log, base: time.Now()}
}

func (h *health) now() int64 { return int64(time.Since(h.base)) }

// skip reports whether Redis is down and not to be asked now.
func (h *health) skip() bool { return h.down.Load() && h.now() < h.downUntil.Load() }

// failed records a failed round trip.
func (h *health) failed(err error) {
	h.failures.Add(1)
	h.downUntil.Store(h.now() + int64(h.probe))
	if h.down.CompareAndSwap(false, true) {
		h.log.Warn("redisquota: Redis unavailable", "key", h.key, "policy", h.policy.String(), "err", err)
	}
}

// ok records a round trip that Redis answered.
func (h *health) ok() {
	if h.down.Load() && h.down.CompareAndSwap(true, false) {
		h.log.Info("redisquota: Redis answers again", "key", h.key)
	}
}

// roundTrip runs fn with a context bounded by timeout and records how it
// went. It returns fn's error, or ctx's own error when the caller's
// context ended first (not counted against Redis).
func (h *health) roundTrip(ctx context.Context, timeout time.Duration, fn func(context.Context) error) error {
	rctx, cancel := context.WithTimeout(ctx, timeout)
	err := fn(rctx)
	cancel()
	switch {
	case err == nil:
		h.ok()
	case ctx.Err() != nil:
		return ctx.Err()
	default:
		h.failed(err)
	}
	return err
}
