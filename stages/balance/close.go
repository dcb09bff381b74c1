package balance

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors/stagekit"
)

// Close stops the sources, removes every endpoint (see Remove: each
// drains, then the balancer closes those it owns) and answers the Reserves
// still waiting with a *troupe.ClosedError; Reserve fails so from then on.
// It waits for the drains; when ctx ends first, the owned endpoints are
// closed with a context already done (their calls still running are told
// to stop), the endpoints the balancer does not own are left to finish
// their calls, and Close returns an error matching ctx's. Calling it again
// returns nil once the first has finished.
func (b *Balancer[K, Req, Res]) Close(ctx context.Context) error {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		b.drains.Wait()
		return nil
	}
	b.closed = true
	ws := b.waiters
	b.waiters = nil
	eps := slices.Clone(b.order)
	held := make([]*troupe.Permit[Req, Res], 0, len(eps))
	for _, ep := range eps {
		held = append(held, b.removeLocked(ep))
	}
	b.mu.Unlock()
	b.stop()
	for _, w := range ws {
		w.ch <- nil
	}
	for i, ep := range eps {
		b.drain(ep, held[i])
	}
	b.sources.Wait()
	done := make(chan struct{})
	go func() {
		b.drains.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		close(b.abandon)
		<-done
		return fmt.Errorf("balance: Close: %w", ctx.Err())
	}
}

// EndpointStats is a snapshot of one endpoint, as the balancer sees it:
// its key and its Snapshot.
//
// A plain value, safe for concurrent use.
type EndpointStats[K comparable] struct {
	Key K
	Snapshot
}

// Snapshot is one endpoint's state as the balancer sees it, whatever its
// key's type: the fields of EndpointStats, and the Detail of each
// troupe.Stats that Stages returns.
//
// A plain value, safe for concurrent use.
type Snapshot struct {
	// Ready: the balancer holds a permit reserved on it and may pick it.
	Ready bool
	// Paused: it refused a call (see Refused) and is not picked before
	// PausedUntil.
	Paused      bool
	PausedUntil time.Time
	// Failing: its last call failed within the cooldown (see
	// FailureCooldown), so it loses every pair to one that is not.
	Failing bool
	// Pending counts its calls picked and not yet answered or released.
	Pending int
	// RTT is its peak-EWMA round-trip estimate now (0 under
	// PendingRequests), and Cost the cost a pick compares: RTT in
	// nanoseconds times Pending+1, or Pending.
	RTT  time.Duration
	Cost float64
	// Picks, Errors and ReserveErrors count the times it was picked, the
	// calls that failed and the Reserves on it that failed.
	Picks, Errors, ReserveErrors uint64
}

// Stats returns a snapshot of each endpoint in the set, in the order they
// were inserted. Reading it changes nothing (a pick's reading of a
// peak-EWMA estimate decays it, as tower's does; this one does not).
func (b *Balancer[K, Req, Res]) Stats() []EndpointStats[K] {
	b.mu.Lock()
	defer b.mu.Unlock()
	now, mono := time.Now(), b.clock()
	out := make([]EndpointStats[K], 0, len(b.order))
	for _, ep := range b.order {
		out = append(out, EndpointStats[K]{Key: ep.key, Snapshot: b.snapshotLocked(ep, now, mono)})
	}
	return out
}

// Stages returns each endpoint in the set as a troupe.Stats, in the order
// they were inserted, so that what reads a stack's stages reads the
// balancer's endpoints (troupehttp.Dashboard's StatsSource): Name is the
// key formatted with fmt, Used its calls in flight (Pending), Capacity
// stagekit.MaxCapacity (the balancer bounds no endpoint's calls: its own
// stages do), and Detail its Snapshot.
func (b *Balancer[K, Req, Res]) Stages() []troupe.Stats {
	b.mu.Lock()
	defer b.mu.Unlock()
	now, mono := time.Now(), b.clock()
	out := make([]troupe.Stats, 0, len(b.order))
	for _, ep := range b.order {
		name := ep.name
		if name == "" {
			name = fmt.Sprint(ep.key)
		}
		s := b.snapshotLocked(ep, now, mono)
		out = append(out, troupe.Stats{Name: name, Capacity: stagekit.MaxCapacity, Used: s.Pending, Detail: s})
	}
	return out
}

// snapshotLocked returns ep's snapshot at now (wall clock) and mono (the
// balancer's clock), mu held.
func (b *Balancer[K, Req, Res]) snapshotLocked(ep *endpoint[K, Req, Res], now time.Time, mono time.Duration) Snapshot {
	s := Snapshot{
		Ready: ep.slot >= 0, Paused: now.Before(ep.pausedTill), Failing: b.failingLocked(ep, mono),
		Pending: ep.pending, Cost: b.costLocked(ep, mono, false),
		Picks: ep.picks, Errors: ep.errs, ReserveErrors: ep.reserveErr,
	}
	if s.Paused {
		s.PausedUntil = ep.pausedTill
	}
	if b.cfg.ewma {
		s.RTT = time.Duration(ep.est.decayed(mono, b.cfg.decay).ns)
	}
	return s
}
