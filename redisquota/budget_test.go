package redisquota_test

import (
	"context"
	"net/http"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/redisquota"
	"github.com/troupe-go/troupe/stages"
	"github.com/troupe-go/troupe/troupetest"
)

// limitStack builds a stack with a SharedLimit stage of b over the server.
func limitStack(t *testing.T, b *redisquota.Budget, url string) stackService {
	t.Helper()
	hc := &http.Client{Transport: &http.Transport{}}
	t.Cleanup(hc.CloseIdleConnections)
	st, err := stages.Stack[int, int]().Layer(redisquota.Layer[int, int](b)).Build(troupetest.NewSystem(t), httpCall(hc, url))
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close(context.Background()) })
	return st
}

// inUse reads how many leases b's key holds now, or -1.
func inUse(b *redisquota.Budget) int {
	n, err := b.InUse(context.Background())
	if err != nil {
		return -1
	}
	return n
}

// spec: Q2 — two budgets on one key (two processes' worth), four stacks:
// never more calls at once at the server than the budget, and every lease
// goes back with its call's outcome.
func TestQ2_BudgetSharedByStacksNeverExceeded(t *testing.T) {
	r := startRedis(t)
	srv := startArrivals(t)
	hold := make(chan struct{})
	srv.setHold(hold)
	var svcs []stackService
	var budgets []*redisquota.Budget
	for i := range 4 {
		if i < 2 {
			b, err := newBudget(t, r.client(t), t.Name(), 3)
			require.NoError(t, err)
			budgets = append(budgets, b)
		}
		svcs = append(svcs, limitStack(t, budgets[i%2], srv.url))
	}
	var outs []<-chan troupetest.Result[int]
	for i := range 12 {
		outs = append(outs, troupetest.Go[int, int](context.Background(), svcs[i%4], i))
	}
	require.True(t, waitFor(patience, func() bool { _, running, _ := srv.stats(); return running == 3 }))
	assert.Equal(t, 3, inUse(budgets[0]))
	_, err := budgets[1].TryAcquire(context.Background())
	assert.ErrorIs(t, err, redisquota.ErrFull)
	close(hold)
	for _, o := range outs {
		require.NoError(t, (<-o).Err)
	}
	n, _, peak := srv.stats()
	assert.Equal(t, 12, n)
	assert.Equal(t, 3, peak, "never more than the budget at once")
	assert.True(t, waitFor(patience, func() bool { return inUse(budgets[0]) == 0 }), "every lease released")
}

// spec: Q2, API5 — a call that runs for several TTLs keeps its lease
// (renewed), and the lease goes back with the outcome, well before it
// would expire.
func TestQ2_LeaseRenewedWhileTheCallRunsReleasedWithItsOutcome(t *testing.T) {
	r := startRedis(t)
	srv := startArrivals(t)
	hold := make(chan struct{})
	srv.setHold(hold)
	const ttl = 400 * time.Millisecond
	b, err := newBudget(t, r.client(t), t.Name(), 1, redisquota.LeaseTTL(ttl))
	require.NoError(t, err)
	st := limitStack(t, b, srv.url)
	out := troupetest.Go[int, int](context.Background(), st, 1)
	require.True(t, waitFor(patience, func() bool { n, _, _ := srv.stats(); return n == 1 }))
	stats, ok := st.Stats("sharedlimit")
	require.True(t, ok)
	snap, ok := stats.Detail.(redisquota.LimitSnapshot)
	require.True(t, ok, "the stage's own counters are its Stats' Detail: %#v", stats.Detail)
	assert.Equal(t, 1, snap.Held)
	assert.Zero(t, snap.Releasing)
	assert.Equal(t, b.Key(), snap.Budget.Key, "with the budget's own")
	assert.Equal(t, int64(2), snap.Budget.RoundTrips, "a sync, then the acquisition")
	held := time.Now()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for time.Since(held) < 3*ttl { // watch it for three TTLs
		require.Equal(t, 1, inUse(b), "renewed, still held")
		<-tick.C
	}
	close(hold)
	require.NoError(t, (<-out).Err)
	released := time.Now()
	require.True(t, waitFor(patience, func() bool { return inUse(b) == 0 }))
	assert.Less(t, time.Since(released), ttl, "released with the outcome, not expired")
	assert.Zero(t, b.Lost())
}

// spec: Q2, Q4 — a process that holds a lease is killed: its lease
// expires within the TTL, and the budget is whole again.
func TestQ2_LeaseOfAKilledProcessExpires(t *testing.T) {
	r := startRedis(t)
	srv := startArrivals(t)
	srv.setHold(make(chan struct{})) // never answered: the child holds its lease until killed
	const ttl = 600 * time.Millisecond
	b, err := newBudget(t, r.client(t), t.Name(), 1, redisquota.LeaseTTL(ttl))
	require.NoError(t, err)
	cmd, out := startChild(t, childSpec{role: "lease", redis: r.addr, url: srv.url, key: t.Name(), budget: 1, ttl: ttl})
	require.True(t, waitFor(10*time.Second, func() bool { n, _, _ := srv.stats(); return n == 1 }), "the child's call: %s", out)
	require.True(t, waitFor(2*ttl, func() bool { return inUse(b) == 1 }))
	_, err = b.TryAcquire(context.Background())
	assert.ErrorIs(t, err, redisquota.ErrFull, "the child holds the only lease")
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for held := time.Now(); time.Since(held) < 3*ttl/2; <-tick.C {
		require.Equal(t, 1, inUse(b), "the child renews it")
	}

	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	killed := time.Now()
	_ = cmd.Wait()
	require.True(t, waitFor(patience, func() bool { return inUse(b) == 0 }))
	took := time.Since(killed)
	t.Logf("the killed process's lease expired %v after the kill (TTL %v)", took, ttl)
	assert.Less(t, took, ttl+300*time.Millisecond, "within the TTL")
	l, err := b.TryAcquire(context.Background())
	require.NoError(t, err, "the budget is whole again")
	require.NoError(t, l.Release(context.Background()))
}

// spec: Q2, Q3 — the budget while Redis is stopped: failing closed, a call
// gets ErrUnavailable at once; falling back to a half, two calls of a
// budget of 4 go, a third waits, and a lease released lets it go.
func TestQ3_BudgetWhileRedisIsStopped(t *testing.T) {
	r := startRedis(t)
	srv := startArrivals(t)
	ctx := context.Background()
	closed, err := newBudget(t, r.client(t), t.Name(), 4, redisquota.Logger(discard()))
	require.NoError(t, err)
	log := &troupetest.Log{}
	fallback, err := newBudget(t, r.client(t), t.Name(), 4, redisquota.OnUnavailable(redisquota.Fallback(2)), redisquota.Logger(log.Logger()))
	require.NoError(t, err)
	r.stop()

	start := time.Now()
	_, err = troupe.Do(ctx, limitStack(t, closed, srv.url), 1)
	assert.ErrorIs(t, err, redisquota.ErrUnavailable)
	assert.Less(t, time.Since(start), time.Second)

	hold := make(chan struct{})
	srv.setHold(hold)
	st := limitStack(t, fallback, srv.url)
	a, b := troupetest.Go[int, int](ctx, st, 1), troupetest.Go[int, int](ctx, st, 2)
	require.True(t, waitFor(patience, func() bool { _, running, _ := srv.stats(); return running == 2 }))
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	_, err = troupe.Do(short, st, 3)
	assert.ErrorIs(t, err, context.DeadlineExceeded, "the local share is 2")
	close(hold)
	require.NoError(t, (<-a).Err)
	require.NoError(t, (<-b).Err)
	_, err = troupe.Do(ctx, st, 4)
	require.NoError(t, err, "a local lease went back")
	assert.Contains(t, log.String(), "fall back to 1/2 of the quota")
}
