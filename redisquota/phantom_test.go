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
// within a second, not after the lease's TTL.
func TestAnAcquisitionThatTimedOutHoldsNoLeaseOnceRedisAnswers(t *testing.T) {
	for _, k := range pauseKinds {
		t.Run(string(k), func(t *testing.T) {
			t.Parallel()
			r := startRedis(t)
			ctx := context.Background()
			const ttl = 3 * time.Second
			b, err := redisquota.NewBudget(r.client(t), t.Name(), 1, redisquota.LeaseTTL(ttl), redisquota.Logger(discard()))
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
			require.NoError(t, got.Release(ctx))
		})
	}
}

// isUnavailable reports whether err says Redis could not be asked.
func isUnavailable(err error) bool { return errors.Is(err, redisquota.ErrUnavailable) }
