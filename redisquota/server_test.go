package redisquota_test

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
)

// arrivals is a loopback HTTP server that notes when each request arrives
// and how many run at once; a request waits for hold to be closed (if
// set) or for its client to go. It is safe for concurrent use.
type arrivals struct {
	url string

	mu      sync.Mutex
	at      []time.Time   // guarded by mu
	running int           // guarded by mu
	peak    int           // guarded by mu
	hold    chan struct{} // guarded by mu
	delay   time.Duration // how long each request takes; guarded by mu
	changes []sample      // guarded by mu
}

// sample is how many requests ran at the server from at on.
type sample struct {
	at      time.Time
	running int
}

// startArrivals starts the server; it stops when t ends.
func startArrivals(t testing.TB) *arrivals {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	a := &arrivals{url: "http://" + ln.Addr().String() + "/"}
	srv := &http.Server{Handler: a, ReadHeaderTimeout: 5 * time.Second}
	done := make(chan struct{})
	go func() { _ = srv.Serve(ln); close(done) }()
	t.Cleanup(func() { _ = srv.Close(); <-done })
	return a
}

func (a *arrivals) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	now := time.Now()
	a.at = append(a.at, now)
	a.running++
	a.peak = max(a.peak, a.running)
	a.changes = append(a.changes, sample{now, a.running})
	hold, delay := a.hold, a.delay
	a.mu.Unlock()
	defer func() {
		a.mu.Lock()
		a.running--
		a.changes = append(a.changes, sample{time.Now(), a.running})
		a.mu.Unlock()
	}()
	if delay > 0 {
		t := time.NewTimer(delay)
		defer t.Stop()
		select {
		case <-t.C:
		case <-r.Context().Done():
			return
		}
	}
	if hold != nil {
		select {
		case <-hold:
		case <-r.Context().Done():
			return
		}
	}
	w.WriteHeader(http.StatusNoContent)
}

// setHold makes the requests that arrive from now on wait for h.
func (a *arrivals) setHold(h chan struct{}) {
	a.mu.Lock()
	a.hold = h
	a.mu.Unlock()
}

// setDelay makes every request take d.
func (a *arrivals) setDelay(d time.Duration) {
	a.mu.Lock()
	a.delay = d
	a.mu.Unlock()
}

// concurrency returns how many requests ran at the server, from each
// change on.
func (a *arrivals) concurrency() []sample {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.changes)
}

// reached returns the first time from from on at which at least n
// requests ran at the server, and whether there was one.
func reached(changes []sample, from time.Time, n int) (time.Time, bool) {
	running, i := 0, 0
	for ; i < len(changes) && !changes[i].at.After(from); i++ {
		running = changes[i].running
	}
	if running >= n {
		return from, true
	}
	for ; i < len(changes); i++ {
		if changes[i].running >= n {
			return changes[i].at, true
		}
	}
	return time.Time{}, false
}

func (a *arrivals) times() []time.Time {
	a.mu.Lock()
	defer a.mu.Unlock()
	ts := slices.Clone(a.at)
	slices.SortFunc(ts, func(x, y time.Time) int { return x.Compare(y) })
	return ts
}

func (a *arrivals) stats() (n, running, peak int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.at), a.running, a.peak
}

// maxInWindow is the most times of ts (sorted) in any window [t, t+per).
func maxInWindow(ts []time.Time, per time.Duration) int {
	most, j := 0, 0
	for i := range ts {
		for j < len(ts) && ts[j].Sub(ts[i]) < per {
			j++
		}
		most = max(most, j-i)
	}
	return most
}

// perSecond counts ts (sorted) in consecutive 1 s buckets from the first.
func perSecond(ts []time.Time) []int {
	var out []int
	for _, t := range ts {
		i := int(t.Sub(ts[0]) / time.Second)
		for len(out) <= i {
			out = append(out, 0)
		}
		out[i]++
	}
	return out
}

// httpCall is a downstream that GETs the server's URL with the call's
// context.
func httpCall(hc *http.Client, url string) troupe.Service[int, int] {
	return actors.Func(func(ctx context.Context, v int) (int, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return 0, err
		}
		res, err := hc.Do(req)
		if err != nil {
			return 0, err
		}
		_ = res.Body.Close()
		return v, nil
	})
}

// waitFor polls cond every few milliseconds until it holds or d passes,
// and reports whether it held.
func waitFor(d time.Duration, cond func() bool) bool {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-ctx.Done():
			return cond()
		case <-tick.C:
		}
	}
	return true
}

// stackService is a built stack of the tests' types.
type stackService = *troupe.Stack[int, int]

// discard is a logger that drops everything.
func discard() *slog.Logger { return slog.New(slog.DiscardHandler) }
