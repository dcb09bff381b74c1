package redisquota_test

import (
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe/stages/ratelimit"
)

// startFleet starts n children of spec's role, and returns a function
// that waits for them all and returns their outputs.
func startFleet(t *testing.T, n int, spec childSpec) func() []string {
	t.Helper()
	outs := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		cmd, out := startChild(t, spec)
		wg.Go(func() {
			err := cmd.Wait()
			outs[i] = strings.TrimSpace(out.String())
			assert.NoError(t, err, "child: %s", out)
		})
	}
	return func() []string { wg.Wait(); return outs }
}

// spec: QF1 — a budget of 20 over 4 OS processes, every lease in use, then
// a 2 s CLIENT PAUSE: the calls that end meanwhile cannot release their
// leases, and those releases are retried, so once the pause ends the
// fleet is back to (nearly) its full budget at the server within a
// second, not after the leases' TTL.
func TestAFleetIsBackToItsBudgetWithinASecondOfAPause(t *testing.T) {
	r := startRedis(t)
	srv := startArrivals(t)
	srv.setDelay(300 * time.Millisecond)
	wait := startFleet(t, 4, childSpec{role: "budget", redis: r.addr, url: srv.url, key: t.Name(), budget: 20, run: 6 * time.Second})
	require.True(t, waitFor(4*time.Second, func() bool { _, running, _ := srv.stats(); return running >= 20 }), "the fleet uses its budget")
	time.Sleep(300 * time.Millisecond) // steady at the budget for a while
	<-r.pauseFor(t, pauseClient, 2*time.Second)
	end := time.Now()
	outs := wait()
	back, ok := reached(srv.concurrency(), end, 18)
	require.True(t, ok, "the fleet never had 18 calls at the server again: %v", outs)
	_, _, peak := srv.stats()
	t.Logf("back to 18 in flight %v after the pause's end; peak %d; children: %v", back.Sub(end).Round(time.Millisecond), peak, outs)
	assert.Less(t, back.Sub(end), time.Second)
	assert.LessOrEqual(t, peak, 20, "never over the budget")
}

// longFleet makes the fleet checks run for as long as their figures are
// quoted for (REDISQUOTA_LONG=1); by default they run shorter.
var longFleet = os.Getenv("REDISQUOTA_LONG") != ""

// spec: QF2 — 4 OS processes share 5 calls per 1.1 s and fall back with
// Fallback(4) when Redis stops answering (SIGSTOP) at the same instant:
// their local shares do not fall into step, and no 1 s window at the
// server holds more than 5, during the outage nor across its start and
// end.
func TestAFleetFallingBackTogetherStaysWithinTheRate(t *testing.T) {
	outage := 4 * time.Second
	if longFleet {
		outage = 10 * time.Second
	}
	r := startRedis(t)
	srv := startArrivals(t)
	rate := ratelimit.Rate{Num: 5, Per: 1100 * time.Millisecond}
	wait := startFleet(t, 4, childSpec{role: "rate", redis: r.addr, url: srv.url, key: t.Name(), rate: rate, fallback: 4, run: outage + 4*time.Second})
	require.True(t, waitFor(5*time.Second, func() bool { n, _, _ := srv.stats(); return n >= 5 }), "the fleet runs")
	time.Sleep(time.Second) // steady on Redis's rate for a while
	start := time.Now()
	<-r.pauseFor(t, pauseStop, outage)
	end := time.Now()
	wait()

	ts := srv.times()
	var during []time.Time
	for _, at := range ts {
		if !at.Before(start) && at.Before(end) {
			during = append(during, at)
		}
	}
	most, all := maxInWindow(during, time.Second), maxInWindow(ts, time.Second)
	t.Logf("outage of %v: %d calls at the server during it, at most %d in a 1 s window (%d over the whole run of %d calls); per second: %v",
		outage, len(during), most, all, len(ts), perSecond(ts))
	assert.LessOrEqual(t, most, 5, "during the outage")
	assert.LessOrEqual(t, all, 5, "across its start and end too")
	assert.GreaterOrEqual(t, len(during), 4*int((outage-rate.Per)/rate.Per), "the local shares were used: one per 1.1 s each, from 1.1 s after the start")
}
