package main

import (
	"bytes"
	"context"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe/troupetest"
)

func TestMain(m *testing.M) { troupetest.Main(m) }

// short is the example's short mode: 50 requests per second instead of 5,
// short waits, a second or two per run. Its margin is 20 %: the limiter
// spaces requests 24 ms apart, so the server sees 51 in a second only if
// one request takes 200 ms longer than another to get from the limiter to
// the server, which a loaded 2-core machine running -race does not do.
func short() config {
	return config{
		requests: 40, concurrency: 20, timeout: 10 * time.Second, retries: 3, backoff: 10 * time.Millisecond,
		rate: 50, per: time.Second, margin: 0.2,
		fail: 0.3, drop: 0.05, bad: 0.1, slow: 0.1, slowMin: 100 * time.Millisecond, slowMax: 300 * time.Millisecond,
		seed: 42,
	}
}

// report is a parsed summary.
type report struct {
	requests, successes, failures, unreadable int
	causes                                    map[string]int
	attempts, retries, mostTries              int
	maxWindow, limit                          int
	p50, p90, p99                             time.Duration
	result                                    string
}

func runShort(t *testing.T, cfg config) (report, string) {
	t.Helper()
	var out bytes.Buffer
	err := run(context.Background(), &out, cfg)
	require.NoError(t, err, out.String())
	return parse(t, out.String()), out.String()
}

func parse(t *testing.T, out string) report {
	t.Helper()
	find := func(re string) []string {
		m := regexp.MustCompile(re).FindStringSubmatch(out)
		require.NotNil(t, m, "no %q in:\n%s", re, out)
		return m[1:]
	}
	ints := func(ss []string) []int {
		var n []int
		for _, s := range ss {
			v, err := strconv.Atoi(s)
			require.NoError(t, err)
			n = append(n, v)
		}
		return n
	}
	durs := func(ss []string) []time.Duration {
		var d []time.Duration
		for _, s := range ss {
			v, err := time.ParseDuration(s)
			require.NoError(t, err)
			d = append(d, v)
		}
		return d
	}
	var r report
	n := ints(find(`requests: (\d+) \(successes (\d+), failures (\d+); unreadable images (\d+)\)`))
	r.requests, r.successes, r.failures, r.unreadable = n[0], n[1], n[2], n[3]
	r.causes = make(map[string]int)
	for _, c := range causes {
		r.causes[c] = ints(find(`(?m)^    ` + regexp.QuoteMeta(c+":") + ` +(\d+)$`))[0]
	}
	n = ints(find(`attempts at the server: (\d+) \((\d+) retries; at most (\d+) for one request`))
	r.attempts, r.retries, r.mostTries = n[0], n[1], n[2]
	n = ints(find(`rate at the server: at most (\d+) requests in any \S+ window \(limit (\d+);`))
	r.maxWindow, r.limit = n[0], n[1]
	d := durs(find(`latency \(.*\): p50 (\S+), p90 (\S+), p99 (\S+)\n`))
	r.p50, r.p90, r.p99 = d[0], d[1], d[2]
	r.result = find(`result: (\S+)`)[0]
	return r
}

// sum adds the failures of the given causes.
func (r report) sum(cs ...string) int {
	n := 0
	for _, c := range cs {
		n += r.causes[c]
	}
	return n
}

// spec: L2 — the seed's stack against a flaky server: everything retryable
// is retried, 4xx is not, the server never sees more than the rate.
func TestOCR_FlakyServer(t *testing.T) {
	r, out := runShort(t, short())
	assert.Equal(t, "ok", r.result)
	assert.Equal(t, 40, r.requests)
	assert.Equal(t, 40, r.successes+r.failures)
	assert.Equal(t, r.failures, r.sum(causes...), "every failure has a cause")
	assert.Positive(t, r.successes)
	assert.Positive(t, r.retries, "a flaky server makes the stack retry")
	assert.Equal(t, 40+r.retries, r.attempts, "each request reached the server once, plus its retries")
	assert.LessOrEqual(t, r.mostTries, 4, "at most 3 retries")
	assert.LessOrEqual(t, r.maxWindow, 50)
	assert.Equal(t, 50, r.limit)
	assert.Positive(t, r.unreadable)
	assert.Equal(t, r.unreadable, r.causes[cause400], "every unreadable image fails with 400, and nothing else does")
	assert.Zero(t, r.causes[causeTimeout]+r.causes[causeOther])
	assert.True(t, 0 < r.p50 && r.p50 <= r.p90 && r.p90 <= r.p99 && r.p99 < 10*time.Second, "%v %v %v", r.p50, r.p90, r.p99)

	assert.Contains(t, out, "stack, outermost first: limit 20 -> timeout 10s -> retry (3 retries, 10ms doubling, or the server's Retry-After) -> ratelimit 50 per 1.2s (smooth, one every 24ms) -> troupehttp.Client")
	for _, why := range []string{"limit outermost: it protects this program", "timeout outside retry and rate limit", "rate limit innermost: every attempt"} {
		assert.Contains(t, out, why)
	}
	assert.Contains(t, out, "rate margin: 20%: the limiter spaces requests 24ms apart, not 20ms")
	assert.Regexp(t, `(?m)^progress: +\d+\.\ds  40/40 done, 0 in flight, 0 waiting`, out, "the last progress line")
	assert.NotContains(t, out, "\r", "not a terminal: no line rewriting")
}

// spec: L2 — a server that always fails: every request makes 1+3 attempts
// and fails with the last status.
func TestOCR_ServerAlwaysFails(t *testing.T) {
	cfg := short()
	cfg.requests, cfg.fail, cfg.drop, cfg.bad, cfg.slow = 15, 1, 0, 0, 0
	r, _ := runShort(t, cfg)
	assert.Equal(t, "ok", r.result, "failures are outcomes, not a broken run")
	assert.Zero(t, r.successes)
	assert.Equal(t, 15, r.sum(cause429, cause500, cause504))
	assert.Equal(t, 60, r.attempts)
	assert.Equal(t, 45, r.retries)
	assert.Equal(t, 4, r.mostTries)
	assert.LessOrEqual(t, r.maxWindow, 50)
}

// spec: L2 — transport errors are retried, then reported as such.
func TestOCR_ConnectionsDrop(t *testing.T) {
	cfg := short()
	cfg.requests, cfg.fail, cfg.drop, cfg.bad, cfg.slow = 10, 0, 1, 0, 0
	r, _ := runShort(t, cfg)
	assert.Equal(t, "ok", r.result)
	assert.Equal(t, 10, r.causes[causeTransport])
	assert.Equal(t, 40, r.attempts)
	assert.Equal(t, 30, r.retries)
}

// spec: L2, T4 — the timeout outside retry ends the whole request; it is not
// retried.
func TestOCR_Timeout(t *testing.T) {
	cfg := short()
	cfg.requests, cfg.fail, cfg.drop, cfg.bad, cfg.slow = 8, 0, 0, 0, 1
	cfg.slowMin, cfg.slowMax, cfg.timeout = 5*time.Second, 5*time.Second, 300*time.Millisecond
	start := time.Now()
	r, out := runShort(t, cfg)
	assert.Less(t, time.Since(start), 3*time.Second, "nobody waited for the slow server")
	assert.Equal(t, "ok", r.result)
	assert.Equal(t, 8, r.causes[causeTimeout])
	assert.Zero(t, r.retries, "a timeout outside retry is not retried")
	assert.LessOrEqual(t, r.attempts, 8)
	assert.GreaterOrEqual(t, r.p50, 300*time.Millisecond)
	assert.Contains(t, out, "one 300ms deadline covers a whole request")
}

// The closes at the end get a bound of their own, counted from the end of
// the run, not from its start.
func TestOCR_ClosingIsBoundedFromTheEnd(t *testing.T) {
	defer func(d time.Duration) { closeTimeout = d }(closeTimeout)
	closeTimeout = 200 * time.Millisecond
	cfg := short()
	cfg.requests = 20
	r, _ := runShort(t, cfg) // about 0.5 s: longer than the bound
	assert.Equal(t, "ok", r.result)
}

// An interrupted run stops waiting, prints its summary, fails, closes
// everything at once, and leaves nothing running (leakcheck).
func TestOCR_Interrupted(t *testing.T) {
	cfg := short()
	cfg.requests = 200
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	var out bytes.Buffer
	start := time.Now()
	err := run(ctx, &out, cfg)
	assert.Less(t, time.Since(start), 2*time.Second, "closing waited for nothing")
	assert.ErrorContains(t, err, "interrupted")
	assert.NotContains(t, err.Error(), "\n", "no close failed after the summary")
	r := parse(t, out.String())
	assert.Equal(t, "FAILED", r.result)
	assert.Positive(t, r.causes[causeOther], "the requests given up on")
	assert.LessOrEqual(t, r.maxWindow, 50)
}

func TestOCR_BadFlags(t *testing.T) {
	for name, change := range map[string]func(*config){
		"no requests":                   func(c *config) { c.requests = 0 },
		"no rate":                       func(c *config) { c.rate = 0 },
		"no period":                     func(c *config) { c.per = 0 },
		"fail over 1":                   func(c *config) { c.fail = 1.5 },
		"fail+drop":                     func(c *config) { c.fail, c.drop = 0.7, 0.7 },
		"margin":                        func(c *config) { c.margin = -0.1 },
		"slow reversed":                 func(c *config) { c.slowMin, c.slowMax = time.Second, time.Millisecond },
		"dashboard on every interface":  func(c *config) { c.dashboard = ":8080" },
		"dashboard on 0.0.0.0":          func(c *config) { c.dashboard = "0.0.0.0:8080" },
		"dashboard on a public address": func(c *config) { c.dashboard = "192.0.2.1:8080" },
		"dashboard on a host name":      func(c *config) { c.dashboard = "example.com:8080" },
		"dashboard without a port":      func(c *config) { c.dashboard = "127.0.0.1" },
	} {
		cfg := short()
		change(&cfg)
		var out bytes.Buffer
		err := run(context.Background(), &out, cfg)
		assert.ErrorContains(t, err, "bad flags", name)
		assert.False(t, strings.Contains(out.String(), "summary"), name)
	}
}
