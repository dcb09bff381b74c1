package redisquota_test

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe/redisquota"
	"github.com/troupe-go/troupe/stages"
	"github.com/troupe-go/troupe/stages/ratelimit"
	"github.com/troupe-go/troupe/troupetest"
)

// The shared quota of the Q4 tests: 10 calls per second at the server.
// The limiter spaces them 120 ms apart (a 20 % margin), so that a call
// that reaches the server up to 200 ms later than the one five before it
// still keeps every 1 s window within 10.
const quota = 10

var sharedRate = ratelimit.Rate{Num: quota, Per: 1200 * time.Millisecond}

// spec: Q1 — the script: GCRA in one round trip, its answers the
// retry-after the stage goes by.
func TestQ1_LimiterAnswersWithRetryAfter(t *testing.T) {
	r := startRedis(t)
	ctx := context.Background()
	lim, err := redisquota.NewLimiter(r.client(t), t.Name(), ratelimit.Rate{Num: 10, Per: time.Second})
	require.NoError(t, err)
	ok, wait, err := lim.Allow(ctx)
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Equal(t, 100*time.Millisecond, wait, "burst 1: the unit granted was the last for an interval")
	ok, wait, err = lim.Allow(ctx)
	require.NoError(t, err)
	assert.False(t, ok)
	assert.InDelta(t, 100*time.Millisecond, wait, float64(50*time.Millisecond))

	burst, err := redisquota.NewLimiter(r.client(t), t.Name()+"-burst", ratelimit.Rate{Num: 10, Per: time.Second}, redisquota.Burst(3))
	require.NoError(t, err)
	var oks int
	for range 4 {
		ok, _, err := burst.Allow(ctx)
		require.NoError(t, err)
		if ok {
			oks++
		}
	}
	assert.Equal(t, 3, oks, "a burst of 3 after a quiet spell, then refused")
	assert.Equal(t, "troupe:{"+t.Name()+"}:rate", lim.Key())
}

// runStacks hammers every stack at once for d.
func runStacks(svcs []stackService, d time.Duration) {
	var wg sync.WaitGroup
	for _, s := range svcs {
		wg.Go(func() { hammer(s, d) })
	}
	wg.Wait()
}

// spec: Q1, Q4 — four stacks in one process, each with its own Limiter
// and Redis client, sharing one key: the server never sees more than the
// quota in any 1 s window.
func TestQ4_FourStacksShareOneKeyNeverExceedTheRate(t *testing.T) {
	r := startRedis(t)
	srv := startArrivals(t)
	sys := troupetest.NewSystem(t)
	hc := &http.Client{Transport: &http.Transport{}}
	defer hc.CloseIdleConnections()
	var svcs []stackService
	for range 4 {
		lim, err := redisquota.NewLimiter(r.client(t), t.Name(), sharedRate)
		require.NoError(t, err)
		st, err := stages.Stack[int, int]().Limit(4).RateLimit(lim.Rate(), ratelimit.Remote(lim)).Build(sys, httpCall(hc, srv.url))
		require.NoError(t, err)
		t.Cleanup(func() { _ = st.Close(context.Background()) })
		svcs = append(svcs, st)
	}
	runStacks(svcs, 2500*time.Millisecond)
	ts := srv.times()
	t.Logf("%d calls at the server, per second: %v", len(ts), perSecond(ts))
	assert.LessOrEqual(t, maxInWindow(ts, time.Second), quota, "no 1 s window over the quota")
	assert.GreaterOrEqual(t, len(ts), 15, "the quota was used: about 8 per second")
}

// spec: Q1, Q4 — four OS processes (this test binary, re-executed), each
// running its stack with the shared rate, against one server.
func TestQ4_FourProcessesShareOneKeyNeverExceedTheRate(t *testing.T) {
	r := startRedis(t)
	srv := startArrivals(t)
	spec := childSpec{role: "rate", redis: r.addr, url: srv.url, key: t.Name(), rate: sharedRate, run: 2500 * time.Millisecond}
	var wg sync.WaitGroup
	for range 4 {
		cmd, out := startChild(t, spec)
		wg.Go(func() {
			err := cmd.Wait()
			assert.NoError(t, err, "child: %s", out)
		})
	}
	wg.Wait()
	ts := srv.times()
	t.Logf("%d calls at the server from 4 processes, per second: %v", len(ts), perSecond(ts))
	assert.LessOrEqual(t, maxInWindow(ts, time.Second), quota, "no 1 s window over the quota")
	assert.GreaterOrEqual(t, len(ts), 12, "the quota was used")
}
