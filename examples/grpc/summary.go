package main

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"
)

// summary is what a run did, and what did not go as configured.
type summary struct {
	cfg      config
	elapsed  time.Duration
	t        *tally
	latency  [3]time.Duration // p50, p90, p99 of the unary calls
	srv      serverResults
	problems []string
}

func summarize(cfg config, elapsed time.Duration, t *tally, srv serverResults) *summary {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := &summary{cfg: cfg, elapsed: elapsed, t: t, srv: srv}
	lat := slices.Clone(t.latencies)
	slices.Sort(lat)
	for i, p := range []float64{0.50, 0.90, 0.99} {
		s.latency[i] = percentile(lat, p)
	}
	problem := func(format string, args ...any) { s.problems = append(s.problems, fmt.Sprintf(format, args...)) }
	if srv.maxWindow > cfg.rate {
		problem("the server saw %d attempts in a %v window (from +%v), over the limit of %d", srv.maxWindow, cfg.per, srv.windowAt.Round(time.Millisecond), cfg.rate)
	}
	if srv.peak > cfg.concurrency {
		problem("%d calls at once at the server, over the concurrency limit of %d", srv.peak, cfg.concurrency)
	}
	if srv.mostTries > 1+cfg.retries {
		problem("a call reached the server %d times, with %d retries allowed", srv.mostTries, cfg.retries)
	}
	if srv.early > 0 {
		problem("%d attempts came before the pushback the server had asked for ended", srv.early)
	}
	if srv.again > 0 {
		problem("%d stream attempts came after the stream had sent a price: a stream must not be retried once its headers came (with its first price)", srv.again)
	}
	failed := 0
	for _, n := range t.failed {
		failed += n
	}
	if got := t.ok + t.whole + failed; got != cfg.calls+cfg.streams {
		problem("%d outcomes for %d calls and streams", got, cfg.calls+cfg.streams)
	}
	for code, n := range t.failed {
		if code != "Unavailable" && code != "ResourceExhausted" {
			problem("%d calls or streams failed with %s, which the server never answers", n, code)
		}
	}
	return s
}

// percentile is the nearest-rank percentile p of sorted ds.
func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	i := int(float64(len(ds))*p+0.999999) - 1
	return ds[min(max(i, 0), len(ds)-1)]
}

func (s *summary) print(w io.Writer) {
	c, t, r := s.cfg, s.t, s.srv
	fmt.Fprintf(w, "\nsummary after %v\n", s.elapsed.Round(10*time.Millisecond))
	fmt.Fprintf(w, "  stack, outermost first: %s\n", c.stackLine())
	fmt.Fprintf(w, "    limit outermost: at most %d calls and open streams at once; a stream holds its permit until it ends.\n", c.concurrency)
	fmt.Fprintf(w, "    timeout outside retry: one %v deadline covers a call with its retries, and a stream's whole life.\n", c.timeout)
	fmt.Fprintf(w, "    retry: UNAVAILABLE and RESOURCE_EXHAUSTED, waiting at least the server's pushback; a stream only before its response headers (which come with its first price here).\n")
	fmt.Fprintf(w, "    rate limit innermost: every attempt, retries and streams included, takes its own slot.\n")
	failed := 0
	for _, n := range t.failed {
		failed += n
	}
	fmt.Fprintf(w, "  quotes: %d (answered %d)\n", c.calls, t.ok)
	fmt.Fprintf(w, "  streams: %d (whole %d, cut after their first prices %d: never retried), %d prices received\n",
		c.streams, t.whole, t.cutAfter, t.ticks)
	fmt.Fprintf(w, "  failures (calls and streams): %d%s\n", failed, byCode(t.failed))
	fmt.Fprintf(w, "  attempts at the server: %d (%d retries; at most %d for one call, %d allowed)\n",
		r.arrivals, r.retries, r.mostTries, 1+c.retries)
	fmt.Fprintf(w, "  pushbacks: %d asked for, %d attempts came before theirs ended\n", r.pushed, r.early)
	fmt.Fprintf(w, "  streams retried after a price: %d\n", r.again)
	fmt.Fprintf(w, "  rate at the server: at most %d attempts in any %v window (limit %d; the densest from +%v)\n",
		r.maxWindow, c.per, c.rate, r.windowAt.Round(time.Millisecond))
	fmt.Fprintf(w, "  concurrency at the server: at most %d at once (limit %d)\n", r.peak, c.concurrency)
	fmt.Fprintf(w, "  quote latency (limit wait included): p50 %v, p90 %v, p99 %v\n",
		s.latency[0].Round(time.Millisecond), s.latency[1].Round(time.Millisecond), s.latency[2].Round(time.Millisecond))
	if len(s.problems) == 0 {
		fmt.Fprintf(w, "  result: ok\n")
		return
	}
	fmt.Fprintf(w, "  result: FAILED\n")
	for _, p := range s.problems {
		fmt.Fprintf(w, "    %s\n", p)
	}
}

// byCode lists failures by status code: " (Unavailable 2, ...)".
func byCode(m map[string]int) string {
	if len(m) == 0 {
		return ""
	}
	var parts []string
	for _, code := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s %d", code, m[code]))
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

// verdict is nil when the run went as configured.
func (s *summary) verdict() error {
	if len(s.problems) == 0 {
		return nil
	}
	return errors.New(strings.Join(s.problems, "; "))
}
