package redisquota

import (
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// Budget is a concurrency budget shared by every process that names the
// same key: at most N calls at once for all of them together. Each call
// holds a lease, a member of a sorted set in Redis that expires after a
// TTL unless its process renews it; a running call's lease is renewed
// every third of the TTL and released with the call's outcome. The leases
// of a process that crashed, or stopped renewing, expire within the TTL.
//
// Under faults: an acquisition whose answer does not come within the
// Timeout fails (or falls back), and can hold nothing once Redis answers
// again: the script refuses an acquisition that reaches Redis after the
// caller's deadline (sent on Redis's clock), and the lease of one that
// ran but whose answer came too late is given back in the background. A
// release that fails is retried in the background until it succeeds or
// the lease has expired. A Redis that lost the leases (a restart without
// persistence, a failover) is detected, and new leases are held back for
// one TTL (ErrHeldBack) while the running calls' renewals put theirs back.
//
// Use it as a stage (NewLimit, or Layer in a stack builder), or directly:
// Acquire waits for a lease, Lease.Release gives it back. Close stops its
// background releases.
//
// A Budget is safe for concurrent use.
type Budget struct {
	c       redis.Scripter
	keys    budgetKeys
	key     string // keys.leases
	n       int
	nArg    any // n, boxed once for the scripts
	ttl     time.Duration
	ttlArg  any // the TTL in milliseconds, boxed once
	timeout time.Duration
	poll    time.Duration
	h       *health
	sync    *syncer
	clock   *redisClock
	rel     *releaser
	local   *localBudget // the fallback's share; nil when failing closed
	name    string       // this Budget's prefix for lease names
	seq     atomic.Uint64

	held         atomic.Bool  // new leases held back when last asked
	heldUntil    atomic.Int64 // health.now() when the hold-back ends
	holdBacks    atomic.Int64
	reregistered atomic.Int64
	renewFails   atomic.Int64
	lost         atomic.Int64 // leases found expired at renewal
	releaseFails atomic.Int64
	abandoned    atomic.Int64
}

// NewBudget returns a Budget of n leases for key, in the Redis that c
// reaches (its keys are the prefix, "{" + key + "}" and a suffix: the
// leases are "troupe:{key}:budget" by default). c must honour contexts
// (see NewLimiter). A bad budget, key, client or option is an error
// matching troupe.ErrBadConfig.
func NewBudget(c redis.Scripter, key string, n int, opts ...Option) (*Budget, error) {
	o, err := newOptions(opts)
	if err != nil {
		return nil, err
	}
	if err := checkClient(c, key); err != nil {
		return nil, err
	}
	if n < 1 {
		return nil, bad("leases", n, "a budget needs at least 1")
	}
	keys := newBudgetKeys(keyBase(o.prefix, key))
	var id [6]byte
	_, _ = crand.Read(id[:]) // never fails (crypto/rand)
	h := newHealth(keys.leases, o)
	b := &Budget{
		c: c, keys: keys, key: keys.leases, n: n, nArg: n, ttl: o.ttl, ttlArg: o.ttl.Milliseconds(), timeout: o.timeout, poll: o.poll, h: h,
		sync:  newSyncer(keys.leases, fmt.Sprintf("budget %d, lease TTL %v", n, o.ttl), o.check, h),
		clock: newRedisClock(),
		name:  strconv.Itoa(os.Getpid()) + "-" + hex.EncodeToString(id[:]),
	}
	b.rel = newReleaser(b)
	h.probeFn = b.doSync
	if o.policy.fallback {
		b.local = &localBudget{slots: make(chan struct{}, n/o.policy.share)}
	}
	return b, nil
}

// Key returns the Redis key the leases are kept in.
func (b *Budget) Key() string { return b.key }

// Size returns the budget: how many leases all processes may hold at once.
func (b *Budget) Size() int { return b.n }

// Lost returns how many of this Budget's leases expired while their calls
// still ran (their renewals failed for a whole TTL).
func (b *Budget) Lost() int64 { return b.lost.Load() }

// Acquire waits for a lease and returns it; the caller must Release it.
// While every lease is taken (or new ones are held back) it tries again
// after a wait that starts short and doubles up to the Poll option. It
// returns ctx's error when ctx ends first and, under FailClosed, an
// *UnavailableError as soon as Redis is unavailable. Under Fallback it
// takes one of the process's local share of leases instead (a local
// lease), or waits for one.
func (b *Budget) Acquire(ctx context.Context) (*Lease, error) {
	wait := max(b.poll/20, time.Millisecond)
	var t *time.Timer
	defer func() {
		if t != nil {
			t.Stop()
		}
	}()
	for {
		l, err := b.TryAcquire(ctx)
		if l != nil || (err != nil && !errors.Is(err, ErrFull)) {
			return l, err
		}
		d := wait/2 + rand.N(wait/2+1) // jittered: processes do not poll in step
		if t == nil {
			t = time.NewTimer(d)
		} else {
			t.Reset(d)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-t.C:
		}
		wait = min(wait*2, b.poll)
	}
}

// TryAcquire takes a lease if one is free, without waiting: it returns
// ErrFull when none is (ErrHeldBack, which matches it, while new leases
// are held back), and otherwise what Acquire would.
func (b *Budget) TryAcquire(ctx context.Context) (*Lease, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if b.h.skip() {
		return b.fallback(ctx, nil)
	}
	l, err := b.acquire(ctx)
	if err == nil || errors.Is(err, ErrFull) || ctx.Err() != nil {
		return l, err
	}
	return b.fallback(ctx, err)
}

// fallback follows the policy for a call that Redis could not decide
// (cause: why; nil when Redis was not asked).
func (b *Budget) fallback(ctx context.Context, cause error) (*Lease, error) {
	ue := &UnavailableError{Key: b.key, Err: cause}
	if b.local == nil {
		return nil, ue
	}
	b.h.decidedLocally(ctx, ue)
	if b.local.tryTake() {
		return &Lease{b: b, local: true}, nil
	}
	return nil, ErrFull
}

// InUse returns how many leases all processes hold now.
func (b *Budget) InUse(ctx context.Context) (int, error) {
	var n int64
	err := b.h.roundTrip(ctx, OpInUse, b.timeout, func(rctx context.Context) error {
		var err error
		n, err = inUseScript.Run(rctx, b.c, b.keys.only).Int64()
		return err
	})
	if err != nil {
		return 0, &UnavailableError{Key: b.key, Err: err}
	}
	return int(n), nil
}

// Check syncs with Redis now (see CheckEvery) and returns a
// *SettingsError, matching ErrSettingsDiffer, when other processes use
// the key with another budget or lease TTL; an *UnavailableError when
// Redis did not answer. A fleet that must agree can call it at start.
func (b *Budget) Check(ctx context.Context) error {
	if err := b.doSync(ctx); err != nil {
		return &UnavailableError{Key: b.key, Err: err}
	}
	return b.sync.disagreement()
}

// Stats returns what the Budget has seen of Redis, and its state now.
func (b *Budget) Stats() Stats {
	s := Stats{Key: b.key, Disagree: b.sync.disagree()}
	b.h.fill(&s)
	s.HeldBack = b.held.Load() && b.h.now() < b.heldUntil.Load()
	s.HoldBacks, s.Reregistered = b.holdBacks.Load(), b.reregistered.Load()
	s.RenewFailures, s.Lost = b.renewFails.Load(), b.lost.Load()
	s.ReleaseFailures, s.Abandoned = b.releaseFails.Load(), b.abandoned.Load()
	s.PendingReleases = b.rel.pendingCount()
	return s
}

// Close stops the Budget's background work: it waits, until ctx ends, for
// the releases being retried (see Lease.Release), then gives up on those
// left (their leases expire in Redis within the TTL) and returns ctx's
// error. Leases still held keep their renewals until released. The Budget
// stays usable; a release that fails after Close is not retried.
func (b *Budget) Close(ctx context.Context) error { return b.rel.close(ctx) }
