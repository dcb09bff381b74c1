package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe/troupetest"
)

// TestMain runs a worker when the fleet under test re-executes this test
// binary as one (os.Executable is the test binary here).
func TestMain(m *testing.M) {
	if os.Getenv(workerEnv) != "" {
		main()
		os.Exit(0)
	}
	troupetest.NeedCommand("redis-server", "Debian/Ubuntu: apt-get install -y redis-server")
	troupetest.Main(m)
}

// spec: Q4 — the fleet, short: 4 worker processes, one shared quota of 20
// per second, no 1 s window over it at the server.
func TestQ4_FleetSharesOneQuota(t *testing.T) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("redis-server not found: install it (Debian/Ubuntu: apt-get install -y redis-server)")
	}
	cfg := config{workers: 4, requests: 6, rate: 20, per: time.Second, margin: 0.2, fail: 0.1, seed: 7, timeout: 10 * time.Second}
	var out bytes.Buffer
	start := time.Now()
	err := run(context.Background(), &out, cfg)
	require.NoError(t, err, out.String())
	assert.Less(t, time.Since(start), 15*time.Second)
	s := out.String()
	assert.Contains(t, s, "result: ok")
	assert.Contains(t, s, "requests: 24 (ok 24, failed 0)")
	m := regexp.MustCompile(`at most (\d+) requests in any 1s window, all workers together \(limit 20;`).FindStringSubmatch(s)
	require.NotNil(t, m, s)
	most, _ := strconv.Atoi(m[1])
	assert.LessOrEqual(t, most, 20)
	for w := 1; w <= 4; w++ {
		assert.Contains(t, s, "worker "+strconv.Itoa(w)+": 6 ok, 0 failed")
	}
}

// spec: QF2, QF5 — the fleet through an outage: its redis-server stopped
// for 3 s mid-run, the workers fall back to a quarter of the quota each,
// and the server never sees more than the quota in a 1 s window, during
// the outage or around it; every request succeeds.
func TestFleetFallsBackThroughAnOutage(t *testing.T) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("redis-server not found: install it (Debian/Ubuntu: apt-get install -y redis-server)")
	}
	cfg := config{workers: 4, requests: 6, rate: 5, per: time.Second, margin: 0.1, seed: 7, timeout: 30 * time.Second,
		fallback: true, outage: 3 * time.Second, outageAt: 1200 * time.Millisecond}
	var out bytes.Buffer
	err := run(context.Background(), &out, cfg)
	require.NoError(t, err, out.String())
	s := out.String()
	t.Log(s)
	assert.Contains(t, s, "result: ok")
	assert.Contains(t, s, "requests: 24 (ok 24, failed 0)")
	m := regexp.MustCompile(`during the outage \(.*\): (\d+) requests at the server, at most (\d+) in any 1s window`).FindStringSubmatch(s)
	require.NotNil(t, m, s)
	during, _ := strconv.Atoi(m[1])
	most, _ := strconv.Atoi(m[2])
	assert.LessOrEqual(t, most, 5)
	assert.Positive(t, during, "the local shares were used")
}

// spec: QF5 — the verdict fails a run in which a request failed, or a
// window held more than the quota.
func TestFleetVerdictCountsFailedRequestsAndWindows(t *testing.T) {
	cfg := config{workers: 2, requests: 3, rate: 5, per: time.Second}
	ok := summary{cfg: cfg, reports: []report{{Worker: 1, OK: 3}, {Worker: 2, OK: 3}}, maxWindow: 5}
	require.NoError(t, ok.verdict())
	failed := ok
	failed.reports = []report{{Worker: 1, OK: 3}, {Worker: 2, OK: 2, Failed: 1, FirstErr: "503 after the retries"}}
	assert.ErrorContains(t, failed.verdict(), "1 of 6 requests failed")
	var out bytes.Buffer
	failed.print(&out)
	assert.Contains(t, out.String(), "result: FAILED: 1 of 6 requests failed")
	over := ok
	over.maxWindow = 6
	assert.ErrorContains(t, over.verdict(), "the server saw 6 requests in one 1s window")
}

func TestFleetBadFlags(t *testing.T) {
	for name, cfg := range map[string]config{
		"no workers": {workers: 0, requests: 1, rate: 1, per: time.Second},
		"no rate":    {workers: 1, requests: 1, rate: 0, per: time.Second},
		"margin":     {workers: 1, requests: 1, rate: 1, per: time.Second, margin: 2},
		"no timeout": {workers: 1, requests: 1, rate: 1, per: time.Second},
		"outage of a Redis of yours": {workers: 1, requests: 1, rate: 1, per: time.Second, timeout: time.Second,
			outage: time.Second, redis: "localhost:6379"},
	} {
		err := run(context.Background(), &bytes.Buffer{}, cfg)
		assert.ErrorContains(t, err, "bad flags", name)
	}
}
