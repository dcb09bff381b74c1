package main

import (
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// backend is a service behind the gateway: an HTTP server on a loopback
// port. It records the orders it processed, by id, and the replays of a
// keyed order it recognised.
type backend struct {
	name string
	url  string
	stop func()
	down atomic.Bool // the catalog's outage

	mu        sync.Mutex
	processed map[string]int // order id -> times processed; guarded by mu
	keys      map[string]bool
	replays   int // keyed orders sent again and answered from the first time; guarded by mu
}

// startBackend serves handle on a loopback port.
func startBackend(name string, handle func(*backend, http.ResponseWriter, *http.Request)) (*backend, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	b := &backend{name: name, url: "http://" + ln.Addr().String(), processed: map[string]int{}, keys: map[string]bool{}}
	hs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { handle(b, w, r) }),
		ReadHeaderTimeout: 5 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = hs.Serve(ln)
	}()
	b.stop = func() {
		_ = hs.Close()
		<-done
	}
	return b, nil
}

// flakyOrders is the orders service: 8 % of requests answered 503, 4 %
// whose connection is reset once the request was read (a POST among them
// has been processed: the client cannot know), 4 % too slow for the
// gateway's timeout; the rest in 2-12 ms. A POST is an order; one with an
// Idempotency-Key already seen is answered as the first time was, not
// processed again.
func flakyOrders(b *backend, w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if r.Method == http.MethodPost {
		b.order(string(body), r.Header.Get("Idempotency-Key"))
	}
	switch p := rand.Float64(); {
	case p < 0.08:
		http.Error(w, "busy", http.StatusServiceUnavailable)
	case p < 0.12:
		if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
			conn.Close()
		}
	case p < 0.16:
		select {
		case <-time.After(time.Second):
		case <-r.Context().Done():
		}
	default:
		time.Sleep(time.Duration(2+rand.IntN(10)) * time.Millisecond)
		fmt.Fprintf(w, `{"service":"orders","path":%q}`, r.URL.Path)
	}
}

// order records an order: processed once per id, unless its key was seen.
func (b *backend) order(id, key string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if key != "" {
		if b.keys[key] {
			b.replays++
			return
		}
		b.keys[key] = true
	}
	b.processed[id]++
}

// twice returns the orders processed more than once, and the replays.
func (b *backend) twice() (n, replays int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, c := range b.processed {
		if c > 1 {
			n++
		}
	}
	return n, b.replays
}

// outageCatalog is the catalog service: 1-8 ms and 2 % of 500s while up,
// a 503 to everything while down.
func outageCatalog(b *backend, w http.ResponseWriter, r *http.Request) {
	if b.down.Load() {
		http.Error(w, "down for maintenance", http.StatusServiceUnavailable)
		return
	}
	if rand.Float64() < 0.02 {
		http.Error(w, "oops", http.StatusInternalServerError)
		return
	}
	time.Sleep(time.Duration(1+rand.IntN(8)) * time.Millisecond)
	fmt.Fprintf(w, `{"service":"catalog","path":%q}`, r.URL.Path)
}
