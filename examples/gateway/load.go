package main

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// routes are the kinds of request the clients send, with their shares.
var routes = []struct {
	name  string
	share float64
}{
	{"GET /catalog", 0.45},
	{"GET /orders", 0.35},
	{"POST /orders", 0.10},
	{"POST /orders (key)", 0.10},
}

// tally is what the clients saw: statuses, and latencies per route.
type tally struct {
	mu        sync.Mutex
	statuses  map[int]int                // guarded by mu
	latencies map[string][]time.Duration // by route; guarded by mu
	failed    int                        // requests without a response; guarded by mu
}

// drive runs cfg.clients clients against the gateway at url for
// cfg.duration, each sending one request after another, cfg.pace apart.
func drive(ctx context.Context, url string, cfg config) *tally {
	t := &tally{statuses: map[int]int{}, latencies: map[string][]time.Duration{}}
	tr := &http.Transport{MaxIdleConnsPerHost: cfg.clients}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	ctx, cancel := context.WithTimeout(ctx, cfg.duration)
	defer cancel()
	var orders atomic.Int64
	var wg sync.WaitGroup
	for range cfg.clients {
		wg.Go(func() {
			for ctx.Err() == nil {
				t.send(ctx, client, url, &orders)
				select {
				case <-ctx.Done():
				case <-time.After(cfg.pace):
				}
			}
		})
	}
	wg.Wait()
	return t
}

// send sends one request of a route drawn by its share, and records what
// came back. A request cut short by the end of the run is not counted.
func (t *tally) send(ctx context.Context, client *http.Client, url string, orders *atomic.Int64) {
	route := pick()
	var req *http.Request
	switch route {
	case "GET /catalog":
		req, _ = http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("%s/catalog/items/%d", url, rand.IntN(1000)), nil)
	case "GET /orders":
		req, _ = http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("%s/orders/%d", url, rand.IntN(1000)), nil)
	default:
		id := fmt.Sprint("order-", orders.Add(1))
		req, _ = http.NewRequestWithContext(ctx, http.MethodPost, url+"/orders/", strings.NewReader(id))
		if route == "POST /orders (key)" {
			req.Header.Set("Idempotency-Key", id)
		}
	}
	start := time.Now()
	resp, err := client.Do(req)
	if err == nil {
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	took := time.Since(start)
	if ctx.Err() != nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if err != nil {
		t.failed++
		return
	}
	t.statuses[resp.StatusCode]++
	t.latencies[route] = append(t.latencies[route], took)
}

func pick() string {
	p := rand.Float64()
	for _, r := range routes {
		if p < r.share {
			return r.name
		}
		p -= r.share
	}
	return routes[0].name
}

// percentile returns the p-th percentile (0-100) of ds, which it sorts.
func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	return ds[min(len(ds)-1, int(float64(len(ds))*p/100))]
}
