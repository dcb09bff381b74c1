package redisquota_test

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/redisquota"
	"github.com/troupe-go/troupe/stages"
	"github.com/troupe-go/troupe/stages/ratelimit"
	"github.com/troupe-go/troupe/troupetest"
)

// outcomes counts the outcomes of calls made in the background, and the
// longest any took. It is safe for concurrent use.
type outcomes struct {
	ok, unavailable, other atomic.Int64
	mu                     sync.Mutex
	slowest                time.Duration // guarded by mu
	others                 []error       // guarded by mu
}

func (o *outcomes) add(err error, took time.Duration) {
	switch {
	case err == nil:
		o.ok.Add(1)
	case errors.Is(err, redisquota.ErrUnavailable):
		o.unavailable.Add(1)
	default:
		o.other.Add(1)
	}
	o.mu.Lock()
	o.slowest = max(o.slowest, took)
	if err != nil && !errors.Is(err, redisquota.ErrUnavailable) {
		o.others = append(o.others, err)
	}
	o.mu.Unlock()
}

// callInBackground calls svc from 4 goroutines, one call after another,
// until the returned stop is called (which waits for them).
func callInBackground(svc troupe.Service[int, int]) (*outcomes, func()) {
	o := &outcomes{}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Go(func() {
			for ctx.Err() == nil {
				start := time.Now()
				_, err := troupe.Do(context.Background(), svc, i) // no deadline: every call must end by itself
				o.add(err, time.Since(start))
			}
		})
	}
	return o, func() { cancel(); wg.Wait() }
}

// rateStack builds the stack of the Q3 tests over the server, with lim.
func rateStack(t *testing.T, lim *redisquota.Limiter, url string) stackService {
	t.Helper()
	hc := &http.Client{Transport: &http.Transport{}}
	t.Cleanup(hc.CloseIdleConnections)
	st, err := stages.Stack[int, int]().Limit(4).RateLimit(lim.Rate(), ratelimit.Remote(lim)).Build(troupetest.NewSystem(t), httpCall(hc, url))
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close(context.Background()) })
	return st
}

const patience = 5 * time.Second // how long a test waits for what must come soon

// spec: Q3 — fail closed: Redis stopped mid-run, every call gets an
// outcome at once (ErrUnavailable), none hangs; restarted, calls go again,
// and the rate holds throughout.
func TestQ3_FailClosedWhileRedisIsStoppedThenRestarted(t *testing.T) {
	r := startRedis(t)
	srv := startArrivals(t)
	log := &troupetest.Log{}
	lim, err := redisquota.NewLimiter(r.client(t), t.Name(), sharedRate,
		redisquota.Timeout(100*time.Millisecond), redisquota.Probe(50*time.Millisecond), redisquota.Logger(log.Logger()))
	require.NoError(t, err)
	o, stop := callInBackground(rateStack(t, lim, srv.url))
	defer stop()
	require.True(t, waitFor(patience, func() bool { return o.ok.Load() >= 3 }), "calls go while Redis runs")

	r.stop()
	require.True(t, waitFor(patience, func() bool { return o.unavailable.Load() >= 20 }), "calls fail closed while it is stopped")
	okDuring := o.ok.Load()
	r.restart()
	require.True(t, waitFor(patience, func() bool { return o.ok.Load() >= okDuring+3 }), "calls go again once it is back")
	stop()

	assert.Zero(t, o.other.Load(), "only successes and ErrUnavailable: %v", o.others)
	assert.Less(t, o.slowest, 2*time.Second, "no call waited on Redis: a success waits for its unit, a failure comes at once")
	ts := srv.times()
	assert.LessOrEqual(t, maxInWindow(ts, time.Second), quota)
	assert.Contains(t, log.String(), "Redis unavailable")
	assert.Contains(t, log.String(), "Redis answers again")
}

// spec: Q3 — fall back: Redis stopped mid-run, the process goes on with
// its local share (here a half: 5 per second), with a warning, and no call
// fails; restarted, it is Redis's quota again.
func TestQ3_FallbackWhileRedisIsStoppedThenRestarted(t *testing.T) {
	r := startRedis(t)
	srv := startArrivals(t)
	log := &troupetest.Log{}
	lim, err := redisquota.NewLimiter(r.client(t), t.Name(), sharedRate, redisquota.OnUnavailable(redisquota.Fallback(2)),
		redisquota.Timeout(100*time.Millisecond), redisquota.Probe(50*time.Millisecond), redisquota.Logger(log.Logger()))
	require.NoError(t, err)
	o, stop := callInBackground(rateStack(t, lim, srv.url))
	defer stop()
	require.True(t, waitFor(patience, func() bool { return o.ok.Load() >= 3 }))

	r.stop()
	require.True(t, waitFor(patience, lim.Down), "a round trip failed")
	down := time.Now()
	okBefore := o.ok.Load()
	require.True(t, waitFor(patience, func() bool { return o.ok.Load() >= okBefore+4 }), "calls go on the local share")
	up := time.Now()
	r.restart()
	require.True(t, waitFor(patience, func() bool { return !lim.Down() }), "Redis is asked again")
	okAfter := o.ok.Load()
	require.True(t, waitFor(patience, func() bool { return o.ok.Load() >= okAfter+3 }))
	stop()

	assert.Zero(t, o.other.Load()+o.unavailable.Load(), "no call failed: %v", o.others)
	var during []time.Time
	for _, at := range srv.times() {
		if at.After(down) && at.Before(up) {
			during = append(during, at)
		}
	}
	assert.LessOrEqual(t, maxInWindow(during, time.Second), quota/2, "the local share: half the quota")
	assert.Contains(t, log.String(), "level=WARN msg=\"redisquota: Redis unavailable\"")
	assert.Contains(t, log.String(), "fall back to 1/2 of the quota")
	assert.Contains(t, log.String(), "Redis answers again")
}

// spec: Q3 — a Redis too slow to answer (its process stopped: the
// connection stays open, nothing comes back): the round trip ends at the
// Timeout, the call fails closed, and nothing hangs.
func TestQ3_SlowRedisTimesOut(t *testing.T) {
	r := startRedis(t)
	ctx := context.Background()
	lim, err := redisquota.NewLimiter(r.client(t), t.Name(), sharedRate, redisquota.Timeout(100*time.Millisecond), redisquota.Logger(discard()))
	require.NoError(t, err)
	b, err := newBudget(t, r.client(t), t.Name(), 2, redisquota.Timeout(100*time.Millisecond), redisquota.Logger(discard()))
	require.NoError(t, err)
	_, _, err = lim.Allow(ctx) // connects
	require.NoError(t, err)
	r.pause()
	defer r.resume()
	start := time.Now()
	_, _, err = lim.Allow(ctx)
	assert.ErrorIs(t, err, redisquota.ErrUnavailable)
	var ue *redisquota.UnavailableError
	require.ErrorAs(t, err, &ue)
	assert.Equal(t, lim.Key(), ue.Key)
	_, err = b.Acquire(ctx)
	assert.ErrorIs(t, err, redisquota.ErrUnavailable)
	assert.Less(t, time.Since(start), time.Second, "each gave up after its 100 ms")
}
