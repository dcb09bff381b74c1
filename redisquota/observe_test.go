package redisquota_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/redisquota"
	"github.com/troupe-go/troupe/troupetest"
)

// collector keeps the events an observer is told. Safe for concurrent
// use.
type collector struct {
	mu  sync.Mutex
	evs []troupe.Event // guarded by mu
}

func (c *collector) Observe(ev troupe.Event) {
	c.mu.Lock()
	c.evs = append(c.evs, ev)
	c.mu.Unlock()
}

func (c *collector) events() []troupe.Event {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.evs)
}

// find returns the events of type typ whose Stage is stage.
func (c *collector) find(typ troupe.EventType, stage string) []troupe.Event {
	var out []troupe.Event
	for _, ev := range c.events() {
		if ev.Type == typ && ev.Stage == stage {
			out = append(out, ev)
		}
	}
	return out
}

// changed reports whether the state changed from one to another.
func (c *collector) changed(stage, from, to string) bool {
	for _, ev := range c.find(troupe.EventStateChanged, stage) {
		if ev.From == from && ev.To == to {
			return true
		}
	}
	return false
}

// spec: QF5 — a Limiter's round trips (latency, failure), its outage and
// its fallback decisions reach the observer, and its Stats.
func TestTheSharedRateReportsRoundTripsOutagesAndFallbacks(t *testing.T) {
	t.Parallel()
	r := startRedis(t)
	ctx := context.Background()
	obs := &collector{}
	lim, err := redisquota.NewLimiter(r.client(t), t.Name(), sharedRate, redisquota.OnUnavailable(redisquota.Fallback(2)),
		redisquota.Timeout(100*time.Millisecond), redisquota.Probe(50*time.Millisecond),
		redisquota.Logger(discard()), redisquota.Observe(obs, "ocr"))
	require.NoError(t, err)
	_, _, err = lim.Allow(ctx)
	require.NoError(t, err)
	key := lim.Key()
	for _, op := range []string{redisquota.OpSync, redisquota.OpAllow} {
		started, finished := obs.find(troupe.EventAccepted, key+":"+op), obs.find(troupe.EventFinished, key+":"+op)
		require.Len(t, started, 1, op)
		require.Len(t, finished, 1, op)
		ev := finished[0]
		assert.Equal(t, "ocr", ev.Pipeline)
		assert.Equal(t, redisquota.StageKind, ev.StageKind)
		assert.Equal(t, troupe.OutcomeSuccess, ev.Outcome)
		assert.Positive(t, ev.Latency, "the round trip's latency")
	}

	r.stop()
	_, _, err = lim.Allow(ctx)
	require.NoError(t, err, "decided locally")
	require.True(t, obs.changed(key, redisquota.StateUp, redisquota.StateFallback))
	failed := obs.find(troupe.EventFinished, key+":"+redisquota.OpAllow)
	require.Len(t, failed, 2)
	assert.Error(t, failed[1].Err, "the failed round trip")
	assert.NotEqual(t, troupe.OutcomeSuccess, failed[1].Outcome, "a failure, or a timeout (refused connections are dialled under the Timeout)")
	_, _, err = lim.Allow(ctx)
	require.NoError(t, err)
	fallbacks := obs.find(troupe.EventFallback, key)
	require.Len(t, fallbacks, 2, "each call decided locally")
	assert.ErrorIs(t, fallbacks[0].Err, redisquota.ErrUnavailable)

	r.restart()
	require.True(t, waitFor(patience, func() bool {
		_, _, _ = lim.Allow(ctx) // a call starts the probe
		return !lim.Down()
	}))
	assert.True(t, obs.changed(key, redisquota.StateFallback, redisquota.StateUp))
	s := lim.Stats()
	assert.Equal(t, int64(1), s.Outages)
	assert.GreaterOrEqual(t, s.Failures, int64(1))
	assert.GreaterOrEqual(t, s.Fallbacks, int64(2))
	assert.Positive(t, s.MeanLatency)
	assert.GreaterOrEqual(t, s.MaxLatency, s.MeanLatency)
	assert.False(t, s.Down)
}

// spec: QF5 — a Budget's renewals that fail and its release that fails
// (then retried in the background) reach the observer, and a lease that
// expired meanwhile is reported lost; Stats count them.
func TestTheBudgetReportsRenewAndReleaseFailures(t *testing.T) {
	t.Parallel()
	r := startRedis(t)
	ctx := context.Background()
	obs := &collector{}
	const ttl = 300 * time.Millisecond
	b, err := newBudget(t, r.client(t), t.Name(), 1, redisquota.LeaseTTL(ttl), redisquota.Timeout(50*time.Millisecond),
		redisquota.Logger(discard()), redisquota.Observe(obs, "ocr"))
	require.NoError(t, err)
	l, err := b.TryAcquire(ctx)
	require.NoError(t, err)
	key := b.Key()

	resumed := r.pauseFor(t, pauseStop, 2*ttl) // longer than the TTL: the lease expires in Redis
	require.True(t, waitFor(patience, func() bool { return b.Stats().RenewFailures >= 1 }))
	assert.True(t, slices.ContainsFunc(obs.find(troupe.EventFinished, key+":"+redisquota.OpRenew), func(ev troupe.Event) bool { return ev.Err != nil }))
	<-resumed
	require.True(t, waitFor(patience, l.Lost), "the next renewal found it gone")
	assert.True(t, obs.changed(key, redisquota.StateHeld, redisquota.StateLost))
	for _, ev := range obs.find(troupe.EventStateChanged, key) {
		if ev.To == redisquota.StateLost {
			assert.ErrorIs(t, ev.Err, redisquota.ErrLeaseLost)
		}
	}

	// A release that fails, retried in the background until Redis takes
	// it (a lease whose TTL outlasts the pause).
	robs := &collector{}
	rb, err := newBudget(t, r.client(t), t.Name()+"-release", 1, redisquota.Timeout(50*time.Millisecond),
		redisquota.Logger(discard()), redisquota.Observe(robs, "ocr"))
	require.NoError(t, err)
	l, err = rb.TryAcquire(ctx)
	require.NoError(t, err)
	resumed = r.pauseFor(t, pauseStop, 300*time.Millisecond)
	require.True(t, isUnavailable(l.Release(ctx)))
	<-resumed
	require.True(t, waitFor(patience, func() bool { return rb.Stats().PendingReleases == 0 }))
	rkey := rb.Key()
	retries := robs.find(troupe.EventRetried, rkey+":"+redisquota.OpRelease)
	require.NotEmpty(t, retries, "the release retried in the background")
	assert.Equal(t, 1, retries[0].Attempt)
	releases := robs.find(troupe.EventFinished, rkey+":"+redisquota.OpRelease)
	assert.Error(t, releases[0].Err)
	assert.NoError(t, releases[len(releases)-1].Err, "until Redis took it")
	assert.Equal(t, int64(1), rb.Stats().ReleaseFailures)
	assert.Equal(t, 0, inUse(rb))
	s := b.Stats()
	assert.Equal(t, int64(1), s.Lost)
	assert.GreaterOrEqual(t, s.RenewFailures, int64(1))
}

// spec: QF5 — an observer that panics is logged, and never costs a call
// its outcome.
func TestAPanickingQuotaObserverIsLogged(t *testing.T) {
	t.Parallel()
	r := startRedis(t)
	log := &troupetest.Log{}
	lim, err := redisquota.NewLimiter(r.client(t), t.Name(), sharedRate, redisquota.Logger(log.Logger()),
		redisquota.Observe(troupe.ObserverFunc(func(troupe.Event) { panic("observer") }), "ocr"))
	require.NoError(t, err)
	ok, _, err := lim.Allow(context.Background())
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Contains(t, log.String(), "redisquota: observer panicked")
}
