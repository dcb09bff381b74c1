// Command grpc is troupe's gRPC example: a client of a flaky quote service
// whose calls, unary and streaming, go through one troupe stack, put under
// a gRPC client by troupegrpc's interceptors:
//
//	concurrency limit 8 -> timeout 3 s -> retry (3, from 20 ms, or the server's pushback) -> rate limit 50/s -> gRPC
//
// It starts its own flaky gRPC server on loopback (some attempts are
// answered UNAVAILABLE, some RESOURCE_EXHAUSTED with a pushback, some
// price streams are cut after their first ticks), asks for a batch of
// quotes and follows a few price streams at once, and ends with a summary.
// The server records every attempt, and the program fails (exit status 1)
// if the server ever saw more than the rate limit in a window of one
// period, more calls at once than the limit, a retry before its pushback
// ended, or a stream retried after it had sent a message.
//
//	go run ./examples/grpc
//	go run ./examples/grpc -n 200 -fail 0.3 -rate 100
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"time"

	"github.com/troupe-go/troupe/actors"
)

// config is one run's settings; main fills it from the flags.
type config struct {
	calls       int           // unary quotes to ask for
	streams     int           // price streams to follow
	ticks       int           // prices per whole stream
	concurrency int           // the concurrency limit, outermost
	timeout     time.Duration // deadline of one call or stream, retries included
	retries     int           // retries after the first attempt
	backoff     time.Duration // wait before the first retry; it doubles
	rate        int           // attempts per period the server may see, innermost
	per         time.Duration // the rate's period
	margin      float64       // safety margin the limiter adds to the period

	// The flaky server.
	fail     float64       // share of attempts answered UNAVAILABLE
	busy     float64       // share of attempts answered RESOURCE_EXHAUSTED
	pushback time.Duration // the wait a RESOURCE_EXHAUSTED asks for
	cut      float64       // share of streams cut after their first ticks
	seed     uint64        // seeds the server's faults; 0: from the clock
}

func main() {
	var cfg config
	flag.IntVar(&cfg.calls, "n", 100, "unary quotes to ask for")
	flag.IntVar(&cfg.streams, "streams", 8, "price streams to follow")
	flag.IntVar(&cfg.ticks, "ticks", 5, "prices per whole stream")
	flag.IntVar(&cfg.concurrency, "c", 8, "concurrency limit (outermost layer; open streams count)")
	flag.DurationVar(&cfg.timeout, "timeout", 3*time.Second, "deadline of one call or stream, retries included")
	flag.IntVar(&cfg.retries, "retries", 3, "retries after the first attempt")
	flag.DurationVar(&cfg.backoff, "backoff", 20*time.Millisecond, "wait before the first retry (then doubling)")
	flag.IntVar(&cfg.rate, "rate", 50, "attempts the server may see per period (innermost layer)")
	flag.DurationVar(&cfg.per, "per", time.Second, "the rate's period")
	flag.Float64Var(&cfg.margin, "margin", 0.1, "safety margin the limiter adds to the period (0.1 = 10%)")
	flag.Float64Var(&cfg.fail, "fail", 0.15, "share of attempts the server answers UNAVAILABLE (0..1)")
	flag.Float64Var(&cfg.busy, "busy", 0.05, "share of attempts the server answers RESOURCE_EXHAUSTED with a pushback (0..1)")
	flag.DurationVar(&cfg.pushback, "pushback", 100*time.Millisecond, "the wait a RESOURCE_EXHAUSTED asks for")
	flag.Float64Var(&cfg.cut, "cut", 0.25, "share of streams the server cuts after their first ticks (0..1)")
	flag.Uint64Var(&cfg.seed, "seed", 0, "random seed for the server's faults (0: from the clock)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	err := run(ctx, os.Stdout, cfg)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "grpc:", err)
		os.Exit(1)
	}
}

// check reports a configuration the run cannot use.
func (c config) check() error {
	share := func(f float64) bool { return f >= 0 && f <= 1 }
	switch {
	case c.calls < 0 || c.streams < 0 || c.ticks < 3 || c.concurrency < 1 || c.retries < 0 || c.rate < 1:
		return errors.New("bad flags: need n >= 0, streams >= 0, ticks >= 3, c >= 1, retries >= 0, rate >= 1")
	case c.timeout <= 0 || c.backoff <= 0 || c.per <= 0 || c.pushback < 0:
		return errors.New("bad flags: timeout, backoff and per must be greater than zero, pushback not negative")
	case !share(c.fail) || !share(c.busy) || !share(c.cut) || c.fail+c.busy > 1:
		return errors.New("bad flags: fail, busy and cut are shares in 0..1, and fail+busy <= 1")
	case c.margin < 0 || c.margin > 1:
		return errors.New("bad flags: margin must be in 0..1")
	}
	return nil
}

// run starts the server, builds the stack, makes the calls and streams,
// prints the summary and closes everything. Its error says what did not
// go as configured (the summary has the details).
func run(ctx context.Context, w io.Writer, cfg config) (err error) {
	if err := cfg.check(); err != nil {
		return err
	}
	if cfg.seed == 0 {
		cfg.seed = uint64(time.Now().UnixNano())
	}
	srv, err := startServer(cfg)
	if err != nil {
		return err
	}
	defer srv.stop()

	// Closing: the connection, the stack, the actor system, then the
	// server (deferred above).
	sys := actors.NewSystem()
	defer func() { err = errors.Join(err, closing(ctx, sys.Shutdown)) }()
	stack, err := buildStack(sys, cfg)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, closing(ctx, stack.Close)) }()
	conn, err := connect(srv.addr, stack)
	if err != nil {
		return err
	}
	defer conn.Close()

	fmt.Fprintf(w, "gRPC client: %d quotes and %d price streams to %s (seed %d)\n", cfg.calls, cfg.streams, srv.addr, cfg.seed)
	fmt.Fprintf(w, "server: %s\n", cfg.serverLine())
	fmt.Fprintf(w, "stack, outermost first: %s\n", cfg.stackLine())

	start := time.Now()
	t := work(ctx, conn, cfg)
	s := summarize(cfg, time.Since(start), t, srv.results(cfg.per))
	if ctx.Err() != nil {
		s.problems = append(s.problems, "interrupted: "+context.Cause(ctx).Error())
	}
	s.print(w)
	return s.verdict()
}

// closeTimeout bounds each close at the end of a run.
var closeTimeout = 5 * time.Second

// closing calls close with a context of its own, made now, so that it
// runs even when ctx was cancelled (an interrupt).
func closing(ctx context.Context, close func(context.Context) error) error {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), closeTimeout)
	defer cancel()
	return close(cctx)
}
