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
	keys        rateKeys
	rate        ratelimit.Rate
	ivArg       any // µs between calls (an int64, boxed once for the script)
	tolArg      any // µs of burst tolerance: (burst-1) intervals
	timeout     time.Duration
	h           *health
	sync        *syncer
	clock       *redisClock
	local       *localRate // the fallback's share; nil when failing closed
	unavailable error      // what a call gets while Redis is down and not asked
}

// NewLimiter returns a Limiter of rate r for key, in the Redis that c
// reaches (its key is the prefix, "{" + key + "}" and ":rate":
// "troupe:{key}:rate" by default). c must honour contexts
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
		return nil, bad("rate", fmt.Sprintf("%d per %v", r.Num, r.Per), "need Num and Per above zero")
	}
	if int64(r.Num) > math.MaxInt64/1000 {
		return nil, bad("rate", fmt.Sprintf("%d per %v", r.Num, r.Per), "too many calls per period")
	}
	iv := ceilDiv(int64(r.Per), int64(r.Num)*1000) // microseconds, rounded up: never over the rate
	if int64(o.burst-1) > (1<<50)/iv {
		return nil, bad("rate", fmt.Sprintf("%d per %v", r.Num, r.Per), "intervals must be 1µs to 2^50µs, burst included")
	}
	keys := newRateKeys(keyBase(o.prefix, key))
	h := newHealth(keys.rate, o)
	l := &Limiter{
		c: c, keys: keys, rate: r, ivArg: iv, tolArg: int64(o.burst-1) * iv, timeout: o.timeout, h: h,
		sync:  newSyncer(keys.rate, fmt.Sprintf("%d per %v, burst %d", r.Num, r.Per, o.burst), o.check, h),
		clock: newRedisClock(),
	}
	h.probeFn = l.doSync
	l.unavailable = &UnavailableError{Key: keys.rate}
	if o.policy.fallback {
		l.local = newLocalRate(r, o.burst, o.policy.share)
		if l.local.none() {
			o.log.Warn("redisquota: the fallback's local share is below one call per period: while Redis is unavailable, calls wait for it",
				"key", keys.rate, "rate", fmt.Sprintf("%d per %v", r.Num, r.Per), "policy", o.policy.String())
		}
	}
	return l, nil
}

// Rate returns the shared rate.
func (l *Limiter) Rate() ratelimit.Rate { return l.rate }

// Key returns the Redis key the rate is kept in.
func (l *Limiter) Key() string { return l.keys.rate }

// Allow asks for one unit: ok reports whether the call may go now, and
// retryAfter how long until the next unit (see ratelimit.Limiter). While
// Redis is unavailable it follows the policy: an *UnavailableError, or the
// local share's decision. It honours ctx, and never waits longer than the
// Timeout option (twice, when a sync is due: see CheckEvery). A unit whose
// round trip timed out is not spent when Redis runs it later: the script
// refuses what comes after the caller's deadline.
func (l *Limiter) Allow(ctx context.Context) (ok bool, retryAfter time.Duration, err error) {
	if err := ctx.Err(); err != nil {
		return false, 0, err
	}
	if l.h.skip() {
		return l.fallback(ctx, l.unavailable)
	}
	if l.sync.due() {
		if err := l.doSync(ctx); err != nil {
			return l.failed(ctx, err)
		}
	}
	start := time.Now()
	owed, first := l.local.takeOwed(start)
	var from int64
	if owed > 0 {
		from, _ = l.clock.estimate(first)
	}
	dl := deadline(ctx, l.clock, start, l.timeout)
	var res []int64
	err = l.h.roundTrip(ctx, OpAllow, l.timeout, func(rctx context.Context) error {
		var err error
		res, err = gcraScript.Run(rctx, l.c, l.keys.gcra, l.ivArg, l.tolArg, dl, owed, from).Int64Slice()
		if err == nil && len(res) != 3 {
			err = fmt.Errorf("redisquota: unexpected script reply %v", res)
		}
		return err
	})
	if err != nil {
		l.local.owe() // counted again, should the script have run: never too few
		return l.failed(ctx, err)
	}
	l.clock.observe(start, time.Now(), res[2])
	if res[0] == -1 {
		l.local.owe()
		l.h.failed(errLate)
		return l.failed(ctx, errLate)
	}
	return res[0] == 1, time.Duration(res[1]) * time.Microsecond, nil
}

// failed answers a call whose round trip failed with err.
func (l *Limiter) failed(ctx context.Context, err error) (bool, time.Duration, error) {
	if errors.Is(err, ctx.Err()) {
		return false, 0, err
	}
	return l.fallback(ctx, &UnavailableError{Key: l.keys.rate, Err: err})
}

// fallback decides while Redis is unavailable.
func (l *Limiter) fallback(ctx context.Context, err error) (bool, time.Duration, error) {
	if l.local == nil {
		return false, 0, err
	}
	l.h.decidedLocally(ctx, err)
	ok, wait := l.local.take(time.Now(), l.h.outages.Load())
	return ok, wait, nil
}

// doSync registers the settings and reads the others' (see sync.go).
func (l *Limiter) doSync(ctx context.Context) error {
	outages := l.h.outages.Load()
	start := time.Now()
	var r []any
	err := l.h.roundTrip(ctx, OpSync, l.timeout, func(rctx context.Context) error {
		var err error
		r, err = rateSyncScript.Run(rctx, l.c, l.keys.sync, l.sync.settings, l.sync.stale()).Slice()
		if err == nil && len(r) < 1 {
			err = fmt.Errorf("redisquota: unexpected script reply %v", r)
		}
		return err
	})
	if err != nil {
		return err
	}
	us, _ := r[0].(int64)
	l.clock.observe(start, time.Now(), us)
	l.sync.synced(outages, replyStrings(r, 1))
	return nil
}

// Check syncs with Redis now (see CheckEvery) and returns a
// *SettingsError, matching ErrSettingsDiffer, when other processes use
// the key with another rate or burst; an *UnavailableError when Redis did
// not answer. A fleet that must agree can call it at start.
func (l *Limiter) Check(ctx context.Context) error {
	if err := l.doSync(ctx); err != nil {
		return &UnavailableError{Key: l.keys.rate, Err: err}
	}
	return l.sync.disagreement()
}

// Stats returns what the Limiter has seen of Redis, and its state now.
func (l *Limiter) Stats() Stats {
	s := Stats{Key: l.keys.rate, Disagree: l.sync.disagree()}
	l.h.fill(&s)
	return s
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
