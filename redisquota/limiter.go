package redisquota

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/troupe-go/troupe/stages/ratelimit"
)

// Limiter is a rate shared by every process that names the same key: at
// most Num calls per Per for all of them together, kept in Redis by GCRA
// in one atomic round trip per call. It is a ratelimit.Limiter: give it to
// a rate limit stage with ratelimit.Remote, and the stage asks it for
// every unit, off its actor, and stays Limited for as long as it says.
//
//	lim, err := redisquota.NewLimiter(rdb, "ocr-api", ratelimit.Rate{Num: 5, Per: time.Second})
//	svc, err := stages.Stack[Req, Res]().RateLimit(lim.Rate(), ratelimit.Remote(lim)).Build(sys, api)
//
// A Limiter is safe for concurrent use.
type Limiter struct {
	c           redis.Scripter
	key         string // the Redis key
	rate        ratelimit.Rate
	interval    int64 // microseconds between calls
	tolerance   int64 // microseconds: (burst-1) intervals
	timeout     time.Duration
	h           *health
	local       *localRate // the fallback's share; nil when failing closed
	unavailable error      // what a call gets while Redis is down and not asked
}

// NewLimiter returns a Limiter of rate r for key, in the Redis that c
// reaches (the key is "troupe:rate:" + key). c must honour contexts
// (redis.Options.ContextTimeoutEnabled), or a slow Redis would hold calls
// for its read timeout. A bad rate, key, client or option is an error
// matching troupe.ErrBadConfig.
func NewLimiter(c redis.Scripter, key string, r ratelimit.Rate, opts ...Option) (*Limiter, error) {
	o, err := newOptions(opts)
	if err != nil {
		return nil, err
	}
	if err := checkClient(c, key); err != nil {
		return nil, err
	}
	if r.Num <= 0 || r.Per <= 0 {
		return nil, fmt.Errorf("%w: a rate needs Num and Per above zero, got %d per %v", ErrBadConfig, r.Num, r.Per)
	}
	if int64(r.Num) > math.MaxInt64/1000 {
		return nil, fmt.Errorf("%w: %d per %v: too many calls per period", ErrBadConfig, r.Num, r.Per)
	}
	iv := ceilDiv(int64(r.Per), int64(r.Num)*1000) // microseconds, rounded up: never over the rate
	if int64(o.burst-1) > (1<<50)/iv {
		return nil, fmt.Errorf("%w: %d per %v: intervals must be 1µs to 2^50µs, burst included", ErrBadConfig, r.Num, r.Per)
	}
	k := "troupe:rate:" + key
	l := &Limiter{
		c: c, key: k, rate: r, interval: iv, tolerance: int64(o.burst-1) * iv,
		timeout: o.timeout, h: newHealth(k, o),
	}
	l.unavailable = &UnavailableError{Key: k}
	if o.policy.fallback {
		share := time.Duration(iv) * time.Microsecond * time.Duration(o.policy.share)
		l.local = &localRate{interval: share, tolerance: time.Duration(o.burst-1) * share}
	}
	return l, nil
}

// Rate returns the shared rate.
func (l *Limiter) Rate() ratelimit.Rate { return l.rate }

// Key returns the Redis key the rate is kept in.
func (l *Limiter) Key() string { return l.key }

// Allow asks for one unit: ok reports whether the call may go now, and
// retryAfter how long until the next unit (see ratelimit.Limiter). While
// Redis is unavailable it follows the policy: an *UnavailableError, or the
// local share's decision. It honours ctx, and never waits longer than the
// Timeout option.
func (l *Limiter) Allow(ctx context.Context) (ok bool, retryAfter time.Duration, err error) {
	if err := ctx.Err(); err != nil {
		return false, 0, err
	}
	if l.h.skip() {
		return l.fallback(l.unavailable)
	}
	var res []int64
	err = l.h.roundTrip(ctx, l.timeout, func(rctx context.Context) error {
		var err error
		res, err = gcraScript.Run(rctx, l.c, []string{l.key}, l.interval, l.tolerance).Int64Slice()
		if err == nil && len(res) != 2 {
			err = fmt.Errorf("redisquota: unexpected script reply %v", res)
		}
		return err
	})
	switch {
	case err == nil:
		return res[0] == 1, time.Duration(res[1]) * time.Microsecond, nil
	case errors.Is(err, ctx.Err()):
		return false, 0, err
	}
	return l.fallback(&UnavailableError{Key: l.key, Err: err})
}

// fallback decides while Redis is unavailable.
func (l *Limiter) fallback(err error) (bool, time.Duration, error) {
	if l.local == nil {
		return false, 0, err
	}
	ok, wait := l.local.take(time.Now())
	return ok, wait, nil
}

// Down reports whether the Limiter considers Redis unavailable now.
func (l *Limiter) Down() bool { return l.h.down.Load() }

// ceilDiv is a/b rounded up, for a >= 0 and b > 0.
func ceilDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 {
		q++
	}
	return q
}
