package main

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"
)

// tally is the client's side of a run: the callers update it, the progress
// line and the summary read it. Every field is guarded by mu.
type tally struct {
	mu         sync.Mutex
	finished   int
	bad        int            // unreadable images made
	failures   map[string]int // by cause
	firstOther error          // what the first failure of causeOther was
	latencies  []time.Duration
}

func (t *tally) unreadable() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.bad++
}

// done records an outcome: cause "" is a success.
func (t *tally) done(cause string, detail error, latency time.Duration, admitted bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.finished++
	if admitted {
		t.latencies = append(t.latencies, latency)
	}
	if cause == "" {
		return
	}
	if t.failures == nil {
		t.failures = make(map[string]int)
	}
	t.failures[cause]++
	if cause == causeOther && t.firstOther == nil {
		t.firstOther = detail
	}
}

func (t *tally) count() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.finished
}

// summary is what a run did, and what did not go as configured.
type summary struct {
	cfg        config
	elapsed    time.Duration
	done       int
	failed     int
	failures   map[string]int
	firstOther error
	unreadable int
	latency    [3]time.Duration // p50, p90, p99
	srv        serverResults
	problems   []string
}

func summarize(cfg config, elapsed time.Duration, t *tally, srv serverResults) *summary {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := &summary{cfg: cfg, elapsed: elapsed, done: t.finished, failures: t.failures, firstOther: t.firstOther,
		unreadable: t.bad, srv: srv}
	for _, n := range t.failures {
		s.failed += n
	}
	lat := slices.Clone(t.latencies)
	slices.Sort(lat)
	for i, p := range []float64{0.50, 0.90, 0.99} {
		s.latency[i] = percentile(lat, p)
	}
	problem := func(format string, args ...any) { s.problems = append(s.problems, fmt.Sprintf(format, args...)) }
	if srv.maxWindow > cfg.rate {
		problem("the server saw %d requests in a %v window (from +%v), over the limit of %d", srv.maxWindow, cfg.per, srv.windowAt.Round(time.Millisecond), cfg.rate)
	}
	if srv.peak > cfg.concurrency {
		problem("%d requests at once at the server, over the concurrency limit of %d", srv.peak, cfg.concurrency)
	}
	if srv.mostTries > 1+cfg.retries {
		problem("a request reached the server %d times, with %d retries allowed", srv.mostTries, cfg.retries)
	}
	if srv.refusedBad > 0 {
		problem("%d requests answered 400 were sent again: a 4xx must not be retried", srv.refusedBad)
	}
	if srv.corrupt > 0 {
		problem("%d attempts did not carry their whole image", srv.corrupt)
	}
	if s.done != cfg.requests {
		problem("%d outcomes for %d requests", s.done, cfg.requests)
	}
	if n := t.failures[causeOther]; n > 0 {
		problem("%d requests failed unexpectedly, the first with: %v", n, t.firstOther)
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
	c := s.cfg
	fmt.Fprintf(w, "\nsummary after %v\n", s.elapsed.Round(10*time.Millisecond))
	fmt.Fprintf(w, "  stack, outermost first: %s\n", c.stackLine())
	fmt.Fprintf(w, "    limit outermost: it protects this program: at most %d images are loaded and in flight; the others wait before their clock starts.\n", c.concurrency)
	fmt.Fprintf(w, "    timeout outside retry and rate limit: one %v deadline covers a whole request, its backoff waits and its waits for a rate slot included.\n", c.timeout)
	fmt.Fprintf(w, "    rate limit innermost: every attempt, retries included, takes its own slot, so the server never sees more than %d per %v.\n", c.rate, c.per)
	fmt.Fprintf(w, "  requests: %d (successes %d, failures %d; unreadable images %d)\n", c.requests, s.done-s.failed, s.failed, s.unreadable)
	fmt.Fprintf(w, "  failures by cause:\n")
	for _, cause := range causes {
		fmt.Fprintf(w, "    %-50s %d\n", cause+":", s.failures[cause])
	}
	fmt.Fprintf(w, "  attempts at the server: %d (%d retries; at most %d for one request, %d allowed)\n",
		s.srv.arrivals, s.srv.retries, s.srv.mostTries, 1+c.retries)
	avg := 0.0
	if s.srv.span > 0 {
		avg = float64(s.srv.arrivals-1) / s.srv.span.Seconds()
	}
	fmt.Fprintf(w, "  rate at the server: at most %d requests in any %v window (limit %d; the densest from +%v), %.2f/s on average\n",
		s.srv.maxWindow, c.per, c.rate, s.srv.windowAt.Round(time.Millisecond), avg)
	fmt.Fprintf(w, "  rate margin: %.0f%%: the limiter spaces requests %v apart, not %v, because the delay from the limiter's release to the server's arrival varies (scheduling, network), and exact spacing would let the server see %d in some %v window.\n",
		100*c.margin, c.spacing(), c.per/time.Duration(c.rate), c.rate+1, c.per)
	queue := time.Duration(c.concurrency) * c.spacing()
	fmt.Fprintf(w, "  rate-limit queue: with %d in flight and one slot every %v, an attempt may wait up to %v for its slot; the %v deadline covers %.1f such waits, so a request that fails twice may time out before its next retry.\n",
		c.concurrency, c.spacing(), queue.Round(time.Millisecond), c.timeout, float64(c.timeout)/float64(queue))
	fmt.Fprintf(w, "  latency (let in by the limit to answered): p50 %v, p90 %v, p99 %v\n",
		s.latency[0].Round(time.Millisecond), s.latency[1].Round(time.Millisecond), s.latency[2].Round(time.Millisecond))
	fmt.Fprintf(w, "  concurrency at the server: at most %d at once (limit %d)\n", s.srv.peak, c.concurrency)
	if len(s.problems) == 0 {
		fmt.Fprintf(w, "  result: ok\n")
		return
	}
	fmt.Fprintf(w, "  result: FAILED\n")
	for _, p := range s.problems {
		fmt.Fprintf(w, "    %s\n", p)
	}
}

// verdict is nil when the run went as configured.
func (s *summary) verdict() error {
	if len(s.problems) == 0 {
		return nil
	}
	return errors.New(strings.Join(s.problems, "; "))
}
