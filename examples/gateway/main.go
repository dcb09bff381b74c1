// Command gateway is an API gateway made of net/http's own
// httputil.ReverseProxy and a troupe stack per backend, in front of two
// flaky backends it starts on loopback, under a load of its own:
//
//	clients -> ReverseProxy -> troupehttp.Transport ->
//	    loadshed -> limit (held until the body is closed) -> breaker (troupehttp.IsFailure) ->
//	    retry (only what is safe: troupehttp.RetryPolicy) -> timeout (per attempt) -> troupehttp.Send
//
// "orders" answers some requests 503, resets some connections after it
// has read the request, and is sometimes too slow; "catalog" is healthy
// but goes down for -outage in the middle of the run. The clients GET
// from both and POST orders, half of them with an Idempotency-Key. The
// gateway answers what its stacks refuse with troupehttp.ErrorHandler: a
// timeout 504, a shed request or an open breaker 503 with Retry-After,
// retries spent 502.
//
// It prints each breaker change as it happens, then what an operator
// wants to see: the statuses the clients got, retries, sheds, breaker
// changes, p50 and p99 latency per route; and it checks that no order
// without a key was processed twice, that the catalog's breaker opened
// during the outage and closed after it (exit status 1 otherwise).
//
//	go run ./examples/gateway
//	go run ./examples/gateway -d 10s -c 64 -outage 3s
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"
)

// config is one run's settings; main fills it from the flags.
type config struct {
	duration  time.Duration // how long the load runs
	clients   int           // concurrent clients
	outage    time.Duration // how long the catalog is down, from a third of the run
	timeout   time.Duration // per attempt
	limit     int           // requests in flight per backend
	pace      time.Duration // each client's pause between requests
	openDelay time.Duration // the breakers' open delay
}

func main() {
	var cfg config
	flag.DurationVar(&cfg.duration, "d", 6*time.Second, "how long the load runs")
	flag.IntVar(&cfg.clients, "c", 48, "concurrent clients")
	flag.DurationVar(&cfg.outage, "outage", 2*time.Second, "how long the catalog backend is down, from a third of the run")
	flag.DurationVar(&cfg.timeout, "timeout", 200*time.Millisecond, "the gateway's timeout per attempt")
	flag.IntVar(&cfg.limit, "limit", 20, "requests in flight per backend")
	flag.DurationVar(&cfg.pace, "pace", 10*time.Millisecond, "each client's pause between requests")
	flag.DurationVar(&cfg.openDelay, "open", 300*time.Millisecond, "the breakers' open delay")
	flag.Parse()
	if err := run(context.Background(), os.Stdout, cfg); err != nil {
		fmt.Fprintln(os.Stderr, "gateway:", err)
		os.Exit(1)
	}
}

func (c config) check() error {
	switch {
	case c.duration <= 0 || c.outage <= 0 || c.timeout <= 0 || c.openDelay <= 0 || c.clients < 1 || c.limit < 1 || c.pace < 0:
		return errors.New("bad flags: durations must be positive (-pace not negative), -c and -limit at least 1")
	case c.duration/3+c.outage+3*c.openDelay > c.duration:
		return fmt.Errorf("bad flags: the outage (%v from %v) must end at least 3 open delays (%v) before the run does (%v)",
			c.outage, c.duration/3, 3*c.openDelay, c.duration)
	}
	return nil
}

// run starts the backends and the gateway, drives the load, and reports;
// its error says what did not go as expected.
func run(ctx context.Context, w io.Writer, cfg config) error {
	if err := cfg.check(); err != nil {
		return err
	}
	start := time.Now()
	log := newLog(w, start)
	orders, err := startBackend("orders", flakyOrders)
	if err != nil {
		return err
	}
	defer orders.stop()
	catalog, err := startBackend("catalog", outageCatalog)
	if err != nil {
		return err
	}
	defer catalog.stop()
	gw, err := startGateway(cfg, log, orders, catalog)
	if err != nil {
		return err
	}
	defer gw.stop(ctx)
	log.say("gateway %s -> orders %s, catalog %s; %d clients for %v, the catalog down from %v to %v",
		gw.url, orders.url, catalog.url, cfg.clients, cfg.duration, cfg.duration/3, cfg.duration/3+cfg.outage)

	go func() { // the catalog's outage
		time.Sleep(cfg.duration / 3)
		catalog.down.Store(true)
		log.say("catalog goes down")
		time.Sleep(cfg.outage)
		catalog.down.Store(false)
		log.say("catalog is back")
	}()
	t := drive(ctx, gw.url, cfg)
	return report(w, t, gw, orders, log)
}
