package redisquota_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe/redisquota"
	"github.com/troupe-go/troupe/troupetest"
)

// spec: QF3 — Redis restarted without persistence forgets every lease
// while 4 calls of a budget of 4 run: the process that holds them sees it
// at its next renewal and the budget is held back for one lease TTL, so
// another process gets no lease meanwhile (ErrHeldBack, which is
// ErrFull); the running calls' renewals put their leases back, so after
// the hold-back the budget is still spent until they end. The server never
// sees more than 4 at once.
func TestARestartThatLostTheLeasesHoldsTheBudgetBackForOneTTL(t *testing.T) {
	t.Parallel()
	r := startRedis(t)
	srv := startArrivals(t)
	hold := make(chan struct{})
	srv.setHold(hold)
	ctx := context.Background()
	const ttl = 1500 * time.Millisecond
	log := &troupetest.Log{}
	running, err := newBudget(t, r.client(t), t.Name(), 4, redisquota.LeaseTTL(ttl), redisquota.Logger(log.Logger()))
	require.NoError(t, err)
	st := limitStack(t, running, srv.url)
	var outs []<-chan troupetest.Result[int]
	for i := range 4 {
		outs = append(outs, troupetest.Go[int, int](ctx, st, i))
	}
	require.True(t, waitFor(patience, func() bool { _, n, _ := srv.stats(); return n == 4 }))

	r.stop()
	r.restart()
	restarted := time.Now()
	require.True(t, waitFor(ttl, func() bool { return running.Stats().HeldBack }), "the renewals saw the leases gone")
	other, err := newBudget(t, r.client(t), t.Name(), 4, redisquota.LeaseTTL(ttl), redisquota.Logger(discard()))
	require.NoError(t, err)
	_, err = other.TryAcquire(ctx)
	require.ErrorIs(t, err, redisquota.ErrHeldBack, "no new lease while the running calls' are not all back")
	assert.ErrorIs(t, err, redisquota.ErrFull)
	require.True(t, waitFor(ttl, func() bool { return inUse(other) == 4 }), "the renewals put the leases back")

	require.True(t, waitFor(2*ttl, func() bool {
		_, err = other.TryAcquire(ctx)
		return !errors.Is(err, redisquota.ErrHeldBack)
	}))
	t.Logf("held back for %v after the restart (TTL %v)", time.Since(restarted).Round(time.Millisecond), ttl)
	assert.ErrorIs(t, err, redisquota.ErrFull, "after the hold-back, the 4 running calls still hold the budget")
	s := running.Stats()
	assert.Equal(t, int64(4), s.Reregistered)
	assert.Zero(t, s.Lost)
	assert.Contains(t, log.String(), "Redis lost the budget's leases")

	close(hold)
	for _, o := range outs {
		require.NoError(t, (<-o).Err)
	}
	_, _, peak := srv.stats()
	assert.Equal(t, 4, peak)
	var l *redisquota.Lease
	require.True(t, waitFor(patience, func() bool {
		l, err = other.TryAcquire(ctx)
		return err == nil
	}), "the calls ended: their leases went back (%v)", err)
	require.NoError(t, l.Release(ctx))
}

// spec: QF3 — a Redis that came back from a dump (or a replica promoted
// by a failover) has the leases as they were, maybe not the last ones:
// the epoch names another server's run id, so even a process that never
// saw it before holds the budget back for one TTL.
func TestARedisWithAnotherServersStateHoldsTheBudgetBack(t *testing.T) {
	t.Parallel()
	r := startRedis(t, "--dir", t.TempDir(), "--dbfilename", "dump.rdb")
	ctx := context.Background()
	const ttl = time.Second
	first, err := newBudget(t, r.client(t), t.Name(), 2, redisquota.LeaseTTL(ttl), redisquota.Logger(discard()))
	require.NoError(t, err)
	l, err := first.TryAcquire(ctx)
	require.NoError(t, err)
	require.NoError(t, l.Release(ctx))
	save := redis.NewClient(&redis.Options{Addr: r.addr})
	require.NoError(t, save.Save(ctx).Err())
	require.NoError(t, save.Close())
	r.stop()
	r.restart() // loads the dump: the epoch is there, with the old run id

	fresh, err := newBudget(t, r.client(t), t.Name(), 2, redisquota.LeaseTTL(ttl), redisquota.Logger(discard()))
	require.NoError(t, err)
	_, err = fresh.TryAcquire(ctx)
	require.ErrorIs(t, err, redisquota.ErrHeldBack)
	assert.True(t, fresh.Stats().HeldBack)
	_, err = first.TryAcquire(ctx)
	require.ErrorIs(t, err, redisquota.ErrHeldBack, "every process sees it")
	l, err = fresh.Acquire(ctx) // waits the hold-back out
	require.NoError(t, err)
	require.NoError(t, l.Release(ctx))
	assert.False(t, fresh.Stats().HeldBack)
}
