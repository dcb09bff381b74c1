package redisquota

import (
	"context"
	"sync"
	"time"
)

// Lease is one unit of a Budget, held until Release. A lease from Redis is
// renewed in the background every third of the budget's TTL until it is
// released; should its renewals fail for a whole TTL (Redis away), it
// expires in Redis and counts as lost (Budget.Lost). A local lease (taken
// from the fallback's share while Redis was unavailable) needs no renewal.
//
// A Lease is safe for concurrent use; Release acts once.
type Lease struct {
	b     *Budget // never changed
	name  string  // the member in Redis; never changed
	local bool    // never changed

	mu       sync.Mutex
	timer    *time.Timer // the next renewal; guarded by mu
	released bool        // guarded by mu
	lost     bool        // guarded by mu
}

// newLease returns a lease from Redis and arms its renewal.
func (b *Budget) newLease(name string) *Lease {
	l := &Lease{b: b, name: name}
	l.mu.Lock()
	l.timer = time.AfterFunc(b.ttl/3, l.renew)
	l.mu.Unlock()
	return l
}

// Local reports whether the lease was taken from the fallback's local
// share rather than from Redis.
func (l *Lease) Local() bool { return l.local }

// Lost reports whether the lease expired in Redis before its release.
func (l *Lease) Lost() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lost
}

// renew extends the lease, on the timer's goroutine, and arms the next
// renewal. A failed renewal is tried again at the next one; a lease found
// gone is lost.
func (l *Lease) renew() {
	l.mu.Lock()
	if l.released {
		l.mu.Unlock()
		return
	}
	l.mu.Unlock()
	var held int64 = 1
	ctx := context.Background()
	err := l.b.h.roundTrip(ctx, l.b.timeout, func(rctx context.Context) error {
		var err error
		held, err = renewScript.Run(rctx, l.b.c, []string{l.b.key}, l.b.ttl.Milliseconds(), l.name).Int64()
		return err
	})
	l.mu.Lock()
	defer l.mu.Unlock()
	if err == nil && held == 0 && !l.released && !l.lost {
		l.lost = true
		l.b.lost.Add(1)
		l.b.h.log.Warn("redisquota: a lease expired while its call ran", "key", l.b.key, "lease", l.name)
	}
	if !l.released && !l.lost {
		l.timer.Reset(l.b.ttl / 3)
	}
}

// Release gives the lease back: at once for a local lease, in one round
// trip (bounded by ctx and the Timeout option) for one from Redis. A
// second Release does nothing. Should Redis not answer, the lease expires
// there within the TTL; the error says so (an *UnavailableError).
func (l *Lease) Release(ctx context.Context) error {
	l.mu.Lock()
	if l.released {
		l.mu.Unlock()
		return nil
	}
	l.released = true
	if l.timer != nil {
		l.timer.Stop()
	}
	l.mu.Unlock()
	if l.local {
		l.b.local.give()
		return nil
	}
	err := l.b.h.roundTrip(ctx, l.b.timeout, func(rctx context.Context) error {
		return releaseScript.Run(rctx, l.b.c, []string{l.b.key}, l.name).Err()
	})
	if err != nil {
		return &UnavailableError{Key: l.b.key, Err: err}
	}
	return nil
}
