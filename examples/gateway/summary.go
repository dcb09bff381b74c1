package main

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"time"
)

// report prints what the clients saw and what the gateway did, and checks
// that it did its job: no order without a key processed twice, the
// catalog's breaker opened during the outage and closed after it, and
// most requests were answered 200.
func report(w io.Writer, t *tally, g *gateway, orders *backend, lg *runLog) error {
	lg.mu.Lock()
	defer lg.mu.Unlock()
	t.mu.Lock()
	defer t.mu.Unlock()

	total := 0
	codes := make([]int, 0, len(t.statuses))
	for c, n := range t.statuses {
		codes = append(codes, c)
		total += n
	}
	slices.Sort(codes)
	fmt.Fprintf(w, "\n%d requests answered (%d without a response):\n", total, t.failed)
	for _, c := range codes {
		fmt.Fprintf(w, "  %d %-22s %6d\n", c, http.StatusText(c), t.statuses[c])
	}
	fmt.Fprintln(w, "\nroute                 requests      p50      p99")
	for _, r := range routes {
		ds := t.latencies[r.name]
		fmt.Fprintf(w, "%-20s %9d %8s %8s\n", r.name, len(ds), round(percentile(ds, 50)), round(percentile(ds, 99)))
	}
	fmt.Fprintln(w, "\nbackend   retries  shed")
	for _, name := range []string{"orders", "catalog"} {
		fmt.Fprintf(w, "%-8s %8d %5d\n", name, load(&g.retries, name), load(&g.sheds, name))
	}
	g.mu.Lock()
	changes := slices.Clone(g.changes)
	g.mu.Unlock()
	fmt.Fprintf(w, "\nbreaker changes (%d):\n", len(changes))
	for _, c := range changes {
		fmt.Fprintf(w, "  %s\n", c)
	}
	twice, replays := orders.twice()
	fmt.Fprintf(w, "\norders without a key processed twice: %d; keyed orders sent again and recognised: %d\n", twice, replays)

	var errs []error
	if twice > 0 {
		errs = append(errs, fmt.Errorf("%d orders without a key were processed twice", twice))
	}
	var opened, closedAfter bool
	for _, c := range changes {
		switch {
		case strings.Contains(c, "catalog breaker closed -> open"):
			opened = true
		case opened && strings.Contains(c, "catalog breaker half-open -> closed"):
			closedAfter = true
		}
	}
	if !opened || !closedAfter {
		errs = append(errs, errors.New("the catalog's breaker did not open during the outage and close after it"))
	}
	if t.statuses[http.StatusOK]*2 < total {
		errs = append(errs, fmt.Errorf("only %d of %d requests were answered 200", t.statuses[http.StatusOK], total))
	}
	return errors.Join(errs...)
}

func load(m interface {
	Load(any) (any, bool)
}, key string) int64 {
	if c, ok := m.Load(key); ok {
		return c.(*atomic.Int64).Load()
	}
	return 0
}

func round(d time.Duration) time.Duration { return d.Round(100 * time.Microsecond) }
