// Command observe runs a troupe stack (concurrency limit, retry with
// backoff, a timeout per attempt) against a flaky, sometimes slow HTTP server on loopback
// that it starts itself, records the stages' events as OpenTelemetry
// metrics with package troupeotel, serves them in Prometheus text at
// /metrics on another loopback port, and prints the troupe_ lines it
// fetches from there at the end: what a dashboard would scrape.
//
//	go run ./examples/observe
//	go run ./examples/observe -n 200 -fail 0.3 -hold 1m
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"time"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/backoff"
	"github.com/troupe-go/troupe/stages"
)

type config struct {
	requests int           // how many requests to send
	callers  int           // concurrent callers
	fail     float64       // share of requests the server fails with 500
	slow     float64       // share of requests the server answers after the timeout
	timeout  time.Duration // the timeout stage's
	hold     time.Duration // how long to keep serving /metrics after the run
	all      bool          // print the histograms' buckets too
}

func main() {
	var cfg config
	flag.IntVar(&cfg.requests, "n", 100, "requests to send")
	flag.IntVar(&cfg.callers, "c", 8, "concurrent callers")
	flag.Float64Var(&cfg.fail, "fail", 0.2, "share of requests the server fails (0..1)")
	flag.Float64Var(&cfg.slow, "slow", 0.05, "share of requests the server answers too late (0..1)")
	flag.DurationVar(&cfg.timeout, "timeout", 100*time.Millisecond, "the timeout stage's timeout")
	flag.DurationVar(&cfg.hold, "hold", 0, "keep serving /metrics this long after the run")
	flag.BoolVar(&cfg.all, "all", false, "print the histograms' buckets too")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	err := run(ctx, os.Stdout, cfg)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "observe:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, w io.Writer, cfg config) error {
	if cfg.requests < 1 || cfg.callers < 1 || cfg.fail < 0 || cfg.fail > 1 || cfg.slow < 0 || cfg.slow > 1 || cfg.timeout <= 0 {
		return errors.New("bad flags: need n >= 1, c >= 1, 0 <= fail, slow <= 1, timeout > 0")
	}
	m, err := startMetrics()
	if err != nil {
		return err
	}
	defer m.stop(ctx)
	url, stopServer, err := startFlakyServer(cfg.fail, cfg.slow, 2*cfg.timeout)
	if err != nil {
		return err
	}
	defer stopServer()
	fmt.Fprintf(w, "flaky server at %s, metrics at %s\n", url, m.url)

	sys := actors.NewSystem()
	defer sys.Shutdown(ctx)
	bo, err := backoff.New(5*time.Millisecond, 50*time.Millisecond)
	if err != nil {
		return err
	}
	client := newClient(url)
	defer client.close()
	svc, err := stages.Stack[int, string]().
		Observe(m.obs, "items").
		Limit(4).
		Retry(2, bo).
		Timeout(cfg.timeout). // each attempt's
		Build(sys, actors.Func(client.fetch, "http"))
	if err != nil {
		return err
	}
	ok, failed := send(ctx, svc, cfg)
	if err := svc.Close(ctx); err != nil {
		return err
	}
	fmt.Fprintf(w, "summary: %d requests, %d ok, %d failed\n\n", cfg.requests, ok, failed)
	if cfg.hold > 0 {
		fmt.Fprintf(w, "serving %s for %s (Ctrl-C to stop)\n", m.url, cfg.hold)
		hold(ctx, cfg.hold)
	}
	return m.print(context.WithoutCancel(ctx), w, cfg.all) // printed after an interrupt too
}

// send makes the requests from cfg.callers goroutines.
func send(ctx context.Context, svc troupe.Service[int, string], cfg config) (ok, failed int) {
	var mu sync.Mutex
	ids := make(chan int)
	var wg sync.WaitGroup
	for range cfg.callers {
		wg.Go(func() {
			for id := range ids {
				_, err := troupe.Do(ctx, svc, id)
				mu.Lock()
				if err != nil {
					failed++
				} else {
					ok++
				}
				mu.Unlock()
			}
		})
	}
	for id := range cfg.requests {
		ids <- id
	}
	close(ids)
	wg.Wait()
	return ok, failed
}

// hold waits for d, or until ctx ends (an interrupt), whichever comes first.
func hold(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}
