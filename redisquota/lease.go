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
	expires  time.Time   // by when Redis has surely dropped it, unless renewed; guarded by mu
	released bool        // guarded by mu
	lost     bool        // guarded by mu
}

// newLease returns a lease from Redis, taken by a round trip answered at
// got, and arms its renewal.
func (b *Budget) newLease(name string, got time.Time) *Lease {
	l := &Lease{b: b, name: name, expires: got.Add(b.ttl)}
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
// gone is lost (while new leases are held back, Redis puts it back
// instead).
func (l *Lease) renew() {
	l.mu.Lock()
	if l.released {
		l.mu.Unlock()
		return
	}
	l.mu.Unlock()
	b := l.b
	res, err := b.renewOnce(context.Background(), l.name) // bounded by the Timeout option
	got := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case err != nil:
		b.renewFails.Add(1)
	case res == 0:
		if !l.released && !l.lost {
			l.lost = true
			b.lost.Add(1)
			b.h.log.Warn("redisquota: a lease expired while its call ran", "key", b.key, "lease", l.name)
			b.h.rep.changed(StateHeld, StateLost, ErrLeaseLost)
		}
	default: // renewed (1), or put back (2)
		if res == 2 {
			b.reregistered.Add(1)
		}
		l.expires = got.Add(b.ttl)
		switch {
		case l.released && res == 2: // put back after its release: give it back again
			b.rel.add(l.name, l.expires)
		case l.released: // renewed before its release ran: a release being retried waits longer
			b.rel.extend(l.name, l.expires)
		}
	}
	if !l.released && !l.lost {
		l.timer.Reset(b.ttl / 3)
	}
}

// Release gives the lease back: at once for a local lease, in one round
// trip (bounded by ctx and the Timeout option) for one from Redis. A
// second Release does nothing. Should Redis not answer (or be considered
// down), the error says so (an *UnavailableError) and the release is
// retried in the background until Redis takes it or the lease has
// expired there (see Budget.Close).
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
	b := l.b
	if l.local {
		b.local.give()
		return nil
	}
	var err error
	if !b.h.skip() {
		err = b.releaseNames(ctx, l.name)
		if err == nil {
			return nil
		}
	}
	b.releaseFails.Add(1)
	l.mu.Lock()
	expires := l.expires // read now: a renewal under way meanwhile extended it
	l.mu.Unlock()
	b.rel.add(l.name, expires)
	return &UnavailableError{Key: b.key, Err: err}
}
