package main

import (
	"bytes"
	"context"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe/troupetest"
)

func TestMain(m *testing.M) { troupetest.Main(m) }

// short is a quick run: 200 attempts per second, short waits, about a
// second. The margin leaves room for the delay from the limiter to the
// server, which varies on a loaded machine.
func short() config {
	return config{
		calls: 40, streams: 8, ticks: 4, concurrency: 8, timeout: 10 * time.Second,
		retries: 3, backoff: 5 * time.Millisecond, rate: 200, per: time.Second, margin: 0.2,
		fail: 0.2, busy: 0.1, pushback: 30 * time.Millisecond, cut: 0.25, seed: 42,
	}
}

// spec: G1 — one stack over unary calls and streams against a flaky server:
// retries within their count, pushbacks honoured, a stream cut after its
// first prices never retried, the rate and the concurrency within limits.
func TestGRPC_FlakyServer(t *testing.T) {
	var out bytes.Buffer
	err := run(context.Background(), &out, short())
	require.NoError(t, err, out.String())
	s := out.String()
	find := func(re string) []int {
		m := regexp.MustCompile(re).FindStringSubmatch(s)
		require.NotNil(t, m, "no %q in:\n%s", re, s)
		var n []int
		for _, v := range m[1:] {
			i, err := strconv.Atoi(v)
			require.NoError(t, err)
			n = append(n, i)
		}
		return n
	}
	require.Contains(t, s, "result: ok")
	streams := find(`streams: (\d+) \(whole (\d+), cut after their first prices (\d+)`)
	require.Equal(t, []int{8, 6, 2}, streams, "s-0 and s-1 are cut, and not retried")
	require.Equal(t, []int{0}, find(`streams retried after a price: (\d+)`))
	pushed := find(`pushbacks: (\d+) asked for, (\d+) attempts came before`)
	require.Positive(t, pushed[0], "the seed makes the server push back")
	require.Zero(t, pushed[1])
	attempts := find(`attempts at the server: (\d+) \((\d+) retries; at most (\d+) for one call`)
	require.Positive(t, attempts[1], "the seed makes the server fail attempts")
	require.LessOrEqual(t, attempts[2], 4)
}

func TestGRPC_BadFlagsAreRefused(t *testing.T) {
	for _, mod := range []func(*config){
		func(c *config) { c.concurrency = 0 },
		func(c *config) { c.ticks = 2 },
		func(c *config) { c.fail, c.busy = 0.7, 0.7 },
		func(c *config) { c.timeout = 0 },
		func(c *config) { c.margin = 2 },
	} {
		c := short()
		mod(&c)
		require.Error(t, run(context.Background(), &bytes.Buffer{}, c))
	}
}
