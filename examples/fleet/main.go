// Command fleet runs the OCR client as a fleet: one process starts a
// loopback OCR server and a redis-server (or uses the Redis named by
// -redis), then re-executes itself as 4 worker processes. Each worker runs
// the OCR example's stack,
//
//	concurrency limit 20 -> timeout 10 s -> retry (3, from 200 ms) -> rate limit -> http.Client
//
// whose rate limit is not its own: it asks a redisquota.Limiter, so the 4
// workers share one quota of 5 requests per second in Redis. The server
// counts every attempt it sees; the summary shows them per second, summed
// over all workers, and the program fails (exit status 1) if any 1 s
// window at the server held more than 5, or any request failed.
//
// With -outage, the fleet stops its redis-server (SIGSTOP: it keeps its
// connections and answers nothing) for that long, -outage-at after the
// start; with -fallback the workers fall back to a local share of the
// quota meanwhile (Fallback(workers)), and the summary shows the rate at
// the server during the outage too. Without -fallback they fail closed,
// and the requests that could not wait fail.
//
//	go run ./examples/fleet                         # needs redis-server: apt-get install -y redis-server
//	go run ./examples/fleet -redis localhost:6379   # a Redis of yours
//	go run ./examples/fleet -fallback -outage 10s -n 20 -timeout 60s
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"time"
)

// config is one run's settings; main fills it from the flags.
type config struct {
	redis    string        // a Redis to use; "": start redis-server here
	workers  int           // worker processes
	requests int           // requests per worker
	rate     int           // requests per period the server may see, from all workers together
	per      time.Duration // the rate's period
	margin   float64       // safety margin the limiter adds to the period
	fail     float64       // share of attempts the server answers 503
	seed     uint64        // the server's faults; 0: from the clock
	timeout  time.Duration // each request's, retries included
	fallback bool          // workers fall back to 1/workers of the quota while Redis is away
	outage   time.Duration // how long the fleet's redis-server is stopped; 0: never
	outageAt time.Duration // when, from the workers' start
}

func main() {
	var cfg config
	flag.StringVar(&cfg.redis, "redis", "", "address of a Redis to use (default: start redis-server on a free loopback port)")
	flag.IntVar(&cfg.workers, "workers", 4, "worker processes")
	flag.IntVar(&cfg.requests, "n", 10, "requests per worker")
	flag.IntVar(&cfg.rate, "rate", 5, "requests per period the server may see, from all workers together")
	flag.DurationVar(&cfg.per, "per", time.Second, "the rate's period")
	flag.Float64Var(&cfg.margin, "margin", 0.1, "safety margin the limiter adds to the period (0.1 = 10%)")
	flag.Float64Var(&cfg.fail, "fail", 0.1, "share of attempts the server answers 503 (retried)")
	flag.Uint64Var(&cfg.seed, "seed", 0, "random seed of the server's faults (0: from the clock)")
	flag.DurationVar(&cfg.timeout, "timeout", 10*time.Second, "each request's timeout, retries included")
	flag.BoolVar(&cfg.fallback, "fallback", false, "while Redis is away, each worker takes 1/workers of the quota locally (default: fail closed)")
	flag.DurationVar(&cfg.outage, "outage", 0, "stop the fleet's own redis-server (SIGSTOP) for this long, mid-run")
	flag.DurationVar(&cfg.outageAt, "outage-at", 1500*time.Millisecond, "when the outage starts, from the workers' start")
	var w workerFlags
	flag.BoolVar(&w.on, "worker", false, "run as a worker (the fleet starts its workers so)")
	flag.IntVar(&w.id, "worker-id", 0, "the worker's number")
	flag.StringVar(&w.url, "url", "", "the server's URL (workers)")
	flag.StringVar(&w.key, "key", "", "the quota's key (workers)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	var err error
	if w.on {
		err = runWorker(ctx, os.Stdout, cfg, w)
	} else {
		err = run(ctx, os.Stdout, cfg)
	}
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "fleet:", err)
		os.Exit(1)
	}
}

func (c config) check() error {
	switch {
	case c.workers < 1 || c.requests < 1 || c.rate < 1 || c.per <= 0:
		return errors.New("bad flags: need workers, n and rate >= 1, per > 0")
	case c.margin < 0 || c.margin > 1 || c.fail < 0 || c.fail > 1:
		return errors.New("bad flags: margin and fail are shares in 0..1")
	case c.timeout <= 0 || c.outage < 0 || c.outageAt < 0:
		return errors.New("bad flags: need timeout > 0, outage and outage-at >= 0")
	case c.outage > 0 && c.redis != "":
		return errors.New("bad flags: -outage stops the fleet's own redis-server: leave -redis out")
	}
	return nil
}

// limiterPer is the period the shared limiter enforces: per stretched by
// the margin, which absorbs the jitter between the moment Redis grants a
// unit and the moment the request reaches the server.
func (c config) limiterPer() time.Duration {
	return c.per + time.Duration(float64(c.per)*c.margin)
}

// run is the fleet: Redis, the server, the workers, the summary.
func run(ctx context.Context, w io.Writer, cfg config) error {
	if err := cfg.check(); err != nil {
		return err
	}
	if cfg.seed == 0 {
		cfg.seed = uint64(time.Now().UnixNano())
	}
	where := "given by -redis"
	var rs *redisServer
	if cfg.redis == "" {
		var err error
		if rs, err = startRedis(ctx); err != nil {
			return err
		}
		defer rs.stop()
		cfg.redis, where = rs.addr, "started here"
	}
	srv, err := startServer(cfg.fail, cfg.seed)
	if err != nil {
		return err
	}
	defer srv.stop()
	key := "fleet-" + strconv.Itoa(os.Getpid()) + "-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	fmt.Fprintf(w, "fleet: %d workers x %d requests to %s; one quota of %d per %v for all (the limiter: %d per %v) in Redis at %s (%s), key %q\n",
		cfg.workers, cfg.requests, srv.url, cfg.rate, cfg.per, cfg.rate, cfg.limiterPer(), cfg.redis, where, key)
	if cfg.outage > 0 {
		policy := "fail closed"
		if cfg.fallback {
			policy = fmt.Sprintf("fall back to 1/%d of the quota each", cfg.workers)
		}
		fmt.Fprintf(w, "outage: redis-server stopped for %v from +%v; the workers %s meanwhile\n", cfg.outage, cfg.outageAt, policy)
	}
	start := time.Now()
	var out outage
	if cfg.outage > 0 {
		stop := out.plan(rs, cfg.outageAt, cfg.outage)
		defer stop()
	}
	reports, err := startWorkers(ctx, cfg, srv.url, key)
	from, to := out.span()
	s := summarize(cfg, time.Since(start), reports, srv.results(), from, to)
	s.print(w)
	return errors.Join(err, s.verdict())
}
