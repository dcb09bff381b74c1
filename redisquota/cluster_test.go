package redisquota_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe/redisquota"
	"github.com/troupe-go/troupe/stages/ratelimit"
)

// startCluster starts a Redis Cluster of one node that serves every slot,
// and returns it: each script's keys must still hash to one slot, or the
// node refuses the script (CROSSSLOT).
func startCluster(t *testing.T) *redisServer {
	t.Helper()
	r := startRedis(t, "--cluster-enabled", "yes", "--cluster-config-file", filepath.Join(t.TempDir(), "nodes.conf"))
	c := redis.NewClient(&redis.Options{Addr: r.addr})
	defer c.Close()
	ctx := context.Background()
	require.NoError(t, c.Do(ctx, "CLUSTER", "ADDSLOTSRANGE", 0, 16383).Err())
	require.True(t, waitFor(patience, func() bool {
		info, err := c.ClusterInfo(ctx).Result()
		return err == nil && strings.Contains(info, "cluster_state:ok")
	}), "the cluster is up")
	return r
}

// spec: QF3 — through a Redis Cluster client, with a prefix of the
// user's: the rate's and the budget's scripts (each touching several
// keys) run, renewals included, and every key is the prefix and the
// name's hash tag.
func TestTheQuotasRunOnARedisClusterWithAPrefix(t *testing.T) {
	t.Parallel()
	r := startCluster(t)
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{r.addr}, ContextTimeoutEnabled: true, MaxRetries: -1})
	t.Cleanup(func() { _ = cc.Close() })
	ctx := context.Background()
	const prefix = "app:quota:"
	lim, err := redisquota.NewLimiter(cc, "ocr", ratelimit.Rate{Num: 100, Per: time.Second}, redisquota.Prefix(prefix))
	require.NoError(t, err)
	ok, _, err := lim.Allow(ctx)
	require.NoError(t, err)
	assert.True(t, ok)
	require.NoError(t, lim.Check(ctx))

	const ttl = 300 * time.Millisecond
	b, err := newBudget(t, cc, "ocr", 2, redisquota.Prefix(prefix), redisquota.LeaseTTL(ttl))
	require.NoError(t, err)
	l, err := b.TryAcquire(ctx)
	require.NoError(t, err)
	require.True(t, waitFor(patience, func() bool { return b.Stats().RoundTrips >= 4 }), "renewed twice")
	assert.Equal(t, 1, inUse(b))
	require.NoError(t, l.Release(ctx))
	require.NoError(t, b.Check(ctx))
	s := b.Stats()
	assert.Zero(t, s.Failures+s.RenewFailures+s.Lost, "%+v", s)

	keys, err := cc.Keys(ctx, "*").Result()
	require.NoError(t, err)
	assert.NotEmpty(t, keys)
	for _, k := range keys {
		assert.True(t, strings.HasPrefix(k, prefix+"{ocr}:"), k)
	}
	assert.Equal(t, prefix+"{ocr}:rate", lim.Key())
	assert.Equal(t, prefix+"{ocr}:budget", b.Key())
}
