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
// Use it as a stage (NewLimit, or Layer in a stack builder), or directly:
// Acquire waits for a lease, Lease.Release gives it back.
//
// A Budget is safe for concurrent use.
type Budget struct {
	c       redis.Scripter
	key     string // the Redis key
	n       int
	ttl     time.Duration
	timeout time.Duration
	poll    time.Duration
	h       *health
	local   *localBudget // the fallback's share; nil when failing closed
	name    string       // this Budget's prefix for lease names
	seq     atomic.Uint64
	lost    atomic.Int64 // leases found expired at renewal
}

// NewBudget returns a Budget of n leases for key, in the Redis that c
// reaches (the key is "troupe:budget:" + key). c must honour contexts (see
// NewLimiter). A bad budget, key, client or option is an error matching
// troupe.ErrBadConfig.
func NewBudget(c redis.Scripter, key string, n int, opts ...Option) (*Budget, error) {
	o, err := newOptions(opts)
	if err != nil {
		return nil, err
	}
	if err := checkClient(c, key); err != nil {
		return nil, err
	}
	if n < 1 {
		return nil, fmt.Errorf("%w: a budget needs at least 1 lease, got %d", ErrBadConfig, n)
	}
	k := "troupe:budget:" + key
	var id [6]byte
	_, _ = crand.Read(id[:]) // never fails (crypto/rand)
	b := &Budget{
		c: c, key: k, n: n, ttl: o.ttl, timeout: o.timeout, poll: o.poll, h: newHealth(k, o),
		name: strconv.Itoa(os.Getpid()) + "-" + hex.EncodeToString(id[:]),
	}
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
// While every lease is taken it tries again after a wait that starts
// short and doubles up to the Poll option. It returns ctx's error when ctx
// ends first and, under FailClosed, an *UnavailableError as soon as Redis
// is unavailable. Under Fallback it takes one of the process's local share
// of leases instead (a local lease), or waits for one.
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
// ErrFull when none is, and otherwise what Acquire would.
func (b *Budget) TryAcquire(ctx context.Context) (*Lease, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if !b.h.skip() {
		name := b.name + "-" + strconv.FormatUint(b.seq.Add(1), 36)
		var got int64
		err := b.h.roundTrip(ctx, b.timeout, func(rctx context.Context) error {
			var err error
			got, err = acquireScript.Run(rctx, b.c, []string{b.key}, b.n, b.ttl.Milliseconds(), name).Int64()
			return err
		})
		switch {
		case err == nil && got == 1:
			return b.newLease(name), nil
		case err == nil:
			return nil, ErrFull
		case errors.Is(err, ctx.Err()):
			return nil, err
		}
		if b.local == nil {
			return nil, &UnavailableError{Key: b.key, Err: err}
		}
	} else if b.local == nil {
		return nil, &UnavailableError{Key: b.key}
	}
	if b.local.tryTake() {
		return &Lease{b: b, local: true}, nil
	}
	return nil, ErrFull
}

// InUse returns how many leases all processes hold now.
func (b *Budget) InUse(ctx context.Context) (int, error) {
	var n int64
	err := b.h.roundTrip(ctx, b.timeout, func(rctx context.Context) error {
		var err error
		n, err = inUseScript.Run(rctx, b.c, []string{b.key}).Int64()
		return err
	})
	if err != nil {
		return 0, &UnavailableError{Key: b.key, Err: err}
	}
	return int(n), nil
}
