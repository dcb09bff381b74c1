package redisquota_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe/redisquota"
)

// spec: QF1 — a budget of 1, Redis paused (each way a Redis stops
// answering): the acquisition times out at the client, and once Redis
// answers again it holds nothing: the next TryAcquire gets the lease
// within a second, not after the lease's TTL. The acquisition that
// reached Redis late took nothing (the script refused it).
func TestAnAcquisitionThatTimedOutHoldsNoLeaseOnceRedisAnswers(t *testing.T) {
	for _, k := range pauseKinds {
		t.Run(string(k), func(t *testing.T) {
			t.Parallel()
			r := startRedis(t)
			ctx := context.Background()
			const ttl = 3 * time.Second
			b, err := newBudget(t, r.client(t), t.Name(), 1, redisquota.LeaseTTL(ttl), redisquota.Logger(discard()))
			require.NoError(t, err)
			l, err := b.TryAcquire(ctx) // Redis answers: the budget knows it
			require.NoError(t, err)
			require.NoError(t, l.Release(ctx))

			resumed := r.pauseFor(t, k, 1500*time.Millisecond)
			start := time.Now()
			_, err = b.TryAcquire(ctx)
			require.ErrorIs(t, err, redisquota.ErrUnavailable)
			assert.Less(t, time.Since(start), time.Second, "the round trip ended at the Timeout")
			<-resumed

			back := time.Now()
			var got *redisquota.Lease
			require.True(t, waitFor(ttl, func() bool {
				got, err = b.TryAcquire(ctx)
				return err == nil
			}), "the lease is free again: %v", err)
			took := time.Since(back)
			t.Logf("%s: the lease was free %v after Redis answered again (TTL %v)", k, took.Round(time.Millisecond), ttl)
			assert.Less(t, took, time.Second)
			assert.Equal(t, 1, inUse(b), "only the lease just taken")
			assert.Equal(t, 2, r.calls(t, "zadd"), "the acquisition that came late added no lease: two were taken, before and after")
			require.NoError(t, got.Release(ctx))
		})
	}
}

// isUnavailable reports whether err says Redis could not be asked.
func isUnavailable(err error) bool { return errors.Is(err, redisquota.ErrUnavailable) }

// spec: QF1 — a release that fails (Redis paused) is retried in the
// background: once Redis answers, the lease is free within a second, not
// after its TTL; Stats count the failure while it is pending.
func TestAFailedReleaseIsRetriedUntilRedisTakesIt(t *testing.T) {
	t.Parallel()
	r := startRedis(t)
	ctx := context.Background()
	const ttl = 3 * time.Second
	b, err := newBudget(t, r.client(t), t.Name(), 1, redisquota.LeaseTTL(ttl), redisquota.Logger(discard()))
	require.NoError(t, err)
	l, err := b.TryAcquire(ctx)
	require.NoError(t, err)

	resumed := r.pauseFor(t, pauseStop, time.Second)
	err = l.Release(ctx)
	require.True(t, isUnavailable(err), "the release failed: %v", err)
	assert.Equal(t, 1, b.Stats().PendingReleases, "and is pending")
	<-resumed
	back := time.Now()
	require.True(t, waitFor(ttl, func() bool { return inUse(b) == 0 }), "released")
	took := time.Since(back)
	t.Logf("released %v after Redis answered again (TTL %v)", took.Round(time.Millisecond), ttl)
	assert.Less(t, took, time.Second)
	require.True(t, waitFor(time.Second, func() bool { return b.Stats().PendingReleases == 0 }))
	s := b.Stats()
	assert.Equal(t, int64(1), s.ReleaseFailures)
	l, err = b.TryAcquire(ctx)
	require.NoError(t, err, "the budget is whole again")
	require.NoError(t, l.Release(ctx))
}

// spec: QF1 — the background releases honour Close's context: with Redis
// gone, Close gives up on them when its context ends, at once.
func TestCloseGivesUpOnPendingReleasesWhenItsContextEnds(t *testing.T) {
	t.Parallel()
	r := startRedis(t)
	ctx := context.Background()
	b, err := newBudget(t, r.client(t), t.Name(), 1, redisquota.Logger(discard()))
	require.NoError(t, err)
	l, err := b.TryAcquire(ctx)
	require.NoError(t, err)
	r.stop()
	require.True(t, isUnavailable(l.Release(ctx)))
	require.Equal(t, 1, b.Stats().PendingReleases, "retried in the background (for up to the 10 s TTL)")
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	assert.ErrorIs(t, b.Close(short), context.DeadlineExceeded)
	assert.Less(t, time.Since(start), time.Second, "Close returned when its context ended")
	assert.NoError(t, b.Close(ctx), "a second Close has nothing to wait for")
}
