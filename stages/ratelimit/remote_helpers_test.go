package ratelimit_test

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/stages/ratelimit"
)

// fakeRemote is an in-process stand-in for a shared limiter: a strict
// spacing of one call per interval (GCRA with a burst of 1), on the
// bubble's clock. It counts its asks and how many run at once. It is safe
// for concurrent use.
type fakeRemote struct {
	interval time.Duration
	tell     bool // a grant says when the next unit comes (the last unit for a while)

	mu       sync.Mutex
	next     time.Time     // guarded by mu
	asks     int           // guarded by mu
	running  int           // guarded by mu
	peak     int           // guarded by mu
	hold     chan struct{} // guarded by mu; non-nil: Allow waits for it to close (or ctx)
	err      error         // guarded by mu; non-nil: Allow fails with it
	panicVal any           // guarded by mu; non-nil: Allow panics with it
}

var _ ratelimit.Limiter = (*fakeRemote)(nil)

func (f *fakeRemote) Allow(ctx context.Context) (bool, time.Duration, error) {
	f.mu.Lock()
	f.asks++
	f.running++
	f.peak = max(f.peak, f.running)
	hold, err, pv := f.hold, f.err, f.panicVal
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		f.running--
		f.mu.Unlock()
	}()
	if hold != nil {
		select {
		case <-hold:
		case <-ctx.Done():
			return false, 0, ctx.Err()
		}
	}
	if pv != nil {
		panic(pv)
	}
	if err != nil {
		return false, 0, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	now := time.Now()
	if now.Before(f.next) {
		return false, f.next.Sub(now), nil
	}
	f.next = now.Add(f.interval)
	if f.tell {
		return true, f.interval, nil
	}
	return true, 0, nil
}

func (f *fakeRemote) stats() (asks, peak int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.asks, f.peak
}

func (f *fakeRemote) set(fn func(*fakeRemote)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn(f)
}

// ratedRemote is a fakeRemote that reports its rate.
type ratedRemote struct {
	*fakeRemote
	r ratelimit.Rate
}

func (r ratedRemote) Rate() ratelimit.Rate { return r.r }

// changes records the states a stage's EventStateChanged events go to.
// It is safe for concurrent use.
type changes struct {
	mu sync.Mutex
	to []string // guarded by mu
}

func (c *changes) Observe(ev troupe.Event) {
	if ev.Type != troupe.EventStateChanged {
		return
	}
	c.mu.Lock()
	c.to = append(c.to, ev.To)
	c.mu.Unlock()
}

func (c *changes) get() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.to)
}
