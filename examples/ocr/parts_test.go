package main

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// times returns t0 plus each offset in milliseconds.
func times(ms ...int) []time.Time {
	t0 := time.Unix(1000, 0)
	ts := make([]time.Time, len(ms))
	for i, m := range ms {
		ts[i] = t0.Add(time.Duration(m) * time.Millisecond)
	}
	return ts
}

// The window check counts half-open windows [t, t+per): six requests spaced
// exactly 200 ms apart are five per second; one that comes a millisecond
// early makes six.
func TestMaxInWindow(t *testing.T) {
	for _, tc := range []struct {
		ms   []int
		most int
		at   time.Duration
	}{
		{nil, 0, 0},
		{[]int{0}, 1, 0},
		{[]int{0, 200, 400, 600, 800, 1000}, 5, 0},
		{[]int{0, 200, 400, 600, 800, 999}, 6, 0},
		{[]int{0, 1000, 1100, 1200, 1300, 1400, 1999}, 6, time.Second},
		{[]int{0, 0, 0, 2000}, 3, 0},
	} {
		most, at := maxInWindow(times(tc.ms...), time.Second)
		assert.Equal(t, tc.most, most, "%v", tc.ms)
		assert.Equal(t, tc.at, at, "%v", tc.ms)
	}
}

func TestPercentile(t *testing.T) {
	var ds []time.Duration
	for i := 1; i <= 100; i++ {
		ds = append(ds, time.Duration(i)*time.Millisecond)
	}
	assert.Equal(t, 50*time.Millisecond, percentile(ds, 0.5))
	assert.Equal(t, 99*time.Millisecond, percentile(ds, 0.99))
	assert.Equal(t, 7*time.Millisecond, percentile([]time.Duration{7 * time.Millisecond}, 0.99))
	assert.Zero(t, percentile(nil, 0.5))
}

// The run fails, with a summary saying why, when the server saw more than
// the rate in some window, or anything else did not go as configured.
func TestVerdict(t *testing.T) {
	cfg := short()
	cfg.rate, cfg.requests = 5, 3
	done := func() *tally {
		var t tally
		for range 3 {
			t.done("", nil, time.Millisecond, true)
		}
		return &t
	}
	s := summarize(cfg, time.Second, done(), serverResults{arrivals: 3, maxWindow: 5, peak: 1, mostTries: 1})
	require.NoError(t, s.verdict())

	for want, srv := range map[string]serverResults{
		"the server saw 6 requests in a 1s window (from +1.5s), over the limit of 5": {maxWindow: 6, windowAt: 1500 * time.Millisecond},
		"a request reached the server 5 times, with 3 retries allowed":               {mostTries: 5},
		"2 requests answered 400 were sent again":                                    {refusedBad: 2},
		"1 attempts did not carry their whole image":                                 {corrupt: 1},
		"21 requests at once at the server":                                          {peak: 21},
	} {
		s := summarize(cfg, time.Second, done(), srv)
		assert.ErrorContains(t, s.verdict(), want)
		var out bytes.Buffer
		s.print(&out)
		assert.Contains(t, out.String(), "result: FAILED\n    "+want)
	}

	var lost tally
	lost.done(causeOther, fmt.Errorf("boom"), 0, false)
	s = summarize(cfg, time.Second, &lost, serverResults{})
	assert.ErrorContains(t, s.verdict(), "1 outcomes for 3 requests")
	assert.ErrorContains(t, s.verdict(), "1 requests failed unexpectedly, the first with: boom")
}

// On a terminal the progress line is rewritten in place, and a shorter line
// blanks what the longer one left; elsewhere every update is a line of its
// own, one a second.
func TestProgress(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lines := []string{"a long first line", "short"}
		var out bytes.Buffer
		i := 0
		p := startProgress(&out, true, func() string { i++; return lines[min(i-1, 1)] })
		time.Sleep(300 * time.Millisecond) // one tick
		p.finish()
		assert.Equal(t, "\ra long first line\rshort            \n", out.String())

		out.Reset()
		n := 0
		p = startProgress(&out, false, func() string { n++; return fmt.Sprint(n) })
		time.Sleep(3500 * time.Millisecond)
		p.finish()
		assert.Equal(t, "progress: 1\nprogress: 2\nprogress: 3\nprogress: 4\n", out.String())
		assert.False(t, strings.Contains(out.String(), "\r"))
	})
}

func TestIsTerminal(t *testing.T) {
	assert.False(t, isTerminal(&bytes.Buffer{}))
}
