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
	cfg := config{workers: 4, requests: 6, rate: 20, per: time.Second, margin: 0.2, fail: 0.1, seed: 7}
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

func TestFleetBadFlags(t *testing.T) {
	for name, cfg := range map[string]config{
		"no workers": {workers: 0, requests: 1, rate: 1, per: time.Second},
		"no rate":    {workers: 1, requests: 1, rate: 0, per: time.Second},
		"margin":     {workers: 1, requests: 1, rate: 1, per: time.Second, margin: 2},
	} {
		err := run(context.Background(), &bytes.Buffer{}, cfg)
		assert.ErrorContains(t, err, "bad flags", name)
	}
}
