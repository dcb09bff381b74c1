package redisquota

import (
	"context"
	"math/rand/v2"
	"sync"
	"time"
)

// Waits between two background tries of the releases that failed: from
// the first, doubling up to the last, jittered.
const (
	retryFirst = 25 * time.Millisecond
	retryLast  = 250 * time.Millisecond
)

// releaser gives back, in the background, the leases that a release could
// not give back (Redis did not answer) and those of acquisitions whose
// answers came too late: it tries them all in one round trip (in batches
// of maxBatch), again and again, until Redis takes them or they have
// expired there anyway. One goroutine does it, started when the first
// lease is added and ended when none is left; Close waits for it. Safe
// for concurrent use.
type releaser struct {
	b      *Budget            // never changed
	ctx    context.Context    // the round trips'; cancelled by close
	cancel context.CancelFunc // never changed

	mu      sync.Mutex
	pending map[string]time.Time // lease name -> when Redis has surely dropped it; guarded by mu
	done    chan struct{}        // closed when the goroutine ends; nil when none runs; guarded by mu
	closed  bool                 // guarded by mu
}

func newReleaser(b *Budget) *releaser {
	ctx, cancel := context.WithCancel(context.Background())
	return &releaser{b: b, ctx: ctx, cancel: cancel, pending: map[string]time.Time{}}
}

// add has the lease name given back, until it succeeds or until.
func (r *releaser) add(name string, until time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return // it expires in Redis
	}
	if u, ok := r.pending[name]; !ok || until.After(u) {
		r.pending[name] = until
	}
	if r.done == nil {
		r.done = make(chan struct{})
		go r.run(r.done)
	}
}

// extend makes a pending release of name wait until until, if later.
func (r *releaser) extend(name string, until time.Time) {
	r.mu.Lock()
	if u, ok := r.pending[name]; ok && until.After(u) {
		r.pending[name] = until
	}
	r.mu.Unlock()
}

func (r *releaser) pendingCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.pending)
}

// batch drops the leases that have expired, and returns up to maxBatch of
// the others; none (and the goroutine's end, marked) when none is left.
func (r *releaser) batch(now time.Time) []any {
	r.mu.Lock()
	defer r.mu.Unlock()
	var names []any
	for name, until := range r.pending {
		switch {
		case now.After(until):
			delete(r.pending, name)
		case len(names) < maxBatch:
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		r.done = nil // the caller's goroutine ends: the next add starts another
	}
	return names
}

func (r *releaser) remove(names []any) {
	r.mu.Lock()
	for _, n := range names {
		delete(r.pending, n.(string))
	}
	r.mu.Unlock()
}

// run is the goroutine: it tries the pending releases until none is left,
// or until close.
func (r *releaser) run(done chan struct{}) {
	defer close(done)
	wait := retryFirst
	t := time.NewTimer(jitter(wait))
	defer t.Stop()
	for attempt := 1; ; attempt++ {
		select {
		case <-r.ctx.Done():
			r.mu.Lock()
			r.done = nil
			r.mu.Unlock()
			return
		case <-t.C:
		}
		names := r.batch(time.Now())
		if len(names) == 0 {
			return
		}
		r.b.h.rep.retried(OpRelease, attempt)
		if err := r.b.releaseNames(r.ctx, names...); err == nil {
			r.remove(names)
			wait = retryFirst
		} else {
			wait = min(wait*2, retryLast)
		}
		t.Reset(jitter(wait))
	}
}

// close waits for the pending releases until ctx ends, then stops.
func (r *releaser) close(ctx context.Context) error {
	r.mu.Lock()
	r.closed = true
	done := r.done
	r.mu.Unlock()
	var err error
	if done != nil {
		select {
		case <-done:
		case <-ctx.Done():
			err = ctx.Err()
		}
	}
	r.cancel()
	if done != nil {
		<-done
	}
	r.mu.Lock()
	clear(r.pending) // given up: they expire in Redis
	r.mu.Unlock()
	return err
}

// jitter returns a wait in [d/2, d].
func jitter(d time.Duration) time.Duration { return d/2 + rand.N(d/2+1) }
