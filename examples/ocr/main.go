// Command ocr is troupe's worked example: a
// client for a third-party OCR API that allows 5 requests per second, built
// as a troupe stack over a real http.Client:
//
//	concurrency limit 20 -> timeout 10 s -> retry (3, from 200 ms) -> rate limit 5/s -> http.Client
//
// It starts its own flaky OCR server on loopback (some answers are 429, 500
// or 504, some connections drop, some answers are slow), sends a batch of
// images through the stack, shows progress on one line, and ends with a
// summary. The server records when each request arrived, and the program
// fails (exit status 1) if the server ever saw more than the rate limit in
// any window of one period, or if anything else did not go as configured.
//
//	go run ./examples/ocr
//	go run ./examples/ocr -n 40 -fail 0.4 -rate 10
//
// With -dashboard 127.0.0.1:8080 it also serves troupehttp's live dashboard
// of the stack on that loopback address, and keeps serving it after the
// summary until interrupted.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"time"

	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/troupehttp"
)

// config is one run's settings; main fills it from the flags.
type config struct {
	requests    int           // OCR requests (images) to send
	concurrency int           // the concurrency limit, outermost
	timeout     time.Duration // deadline of one request, retries and waits included
	retries     int           // retries after the first attempt
	backoff     time.Duration // wait before the first retry; it doubles
	rate        int           // requests per period the server may see, innermost
	per         time.Duration // the rate's period
	margin      float64       // safety margin the limiter adds to the period

	// The flaky server.
	fail             float64       // share of attempts answered 429, 500 or 504
	drop             float64       // share of attempts whose connection drops
	bad              float64       // share of images the server cannot read (400)
	slow             float64       // share of attempts that are slow
	slowMin, slowMax time.Duration // how slow

	seed uint64 // seeds the server's faults and the images; 0: from the clock

	dashboard string // where to serve the live dashboard (loopback only); "": none
}

func main() {
	var cfg config
	flag.IntVar(&cfg.requests, "n", 100, "OCR requests (images) to send")
	flag.IntVar(&cfg.concurrency, "c", 20, "concurrency limit (outermost layer)")
	flag.DurationVar(&cfg.timeout, "timeout", 10*time.Second, "deadline of one request, retries included")
	flag.IntVar(&cfg.retries, "retries", 3, "retries after the first attempt")
	flag.DurationVar(&cfg.backoff, "backoff", 200*time.Millisecond, "wait before the first retry (then doubling)")
	flag.IntVar(&cfg.rate, "rate", 5, "requests the server may see per period (innermost layer)")
	flag.DurationVar(&cfg.per, "per", time.Second, "the rate's period")
	flag.Float64Var(&cfg.margin, "margin", 0.05, "safety margin the limiter adds to the period (0.05 = 5%)")
	flag.Float64Var(&cfg.fail, "fail", 0.2, "share of attempts the server answers 429, 500 or 504 (0..1)")
	flag.Float64Var(&cfg.drop, "drop", 0.02, "share of attempts whose connection the server drops (0..1)")
	flag.Float64Var(&cfg.bad, "bad", 0.03, "share of images the server cannot read: 400, never retried (0..1)")
	flag.Float64Var(&cfg.slow, "slow", 0.05, "share of attempts the server is slow to answer (0..1)")
	flag.DurationVar(&cfg.slowMin, "slow-min", time.Second, "shortest slow answer")
	flag.DurationVar(&cfg.slowMax, "slow-max", 3*time.Second, "longest slow answer")
	flag.Uint64Var(&cfg.seed, "seed", 0, "random seed for the images and the server's faults, drawn in order of arrival (0: from the clock)")
	flag.StringVar(&cfg.dashboard, "dashboard", "", "serve a live dashboard of the stack at this loopback address (127.0.0.1:8080), until interrupted")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	err := run(ctx, os.Stdout, cfg)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "ocr:", err)
		os.Exit(1)
	}
}

// check reports a configuration the run cannot use.
func (c config) check() error {
	share := func(f float64) bool { return f >= 0 && f <= 1 }
	switch {
	case c.requests < 1 || c.concurrency < 1 || c.retries < 0 || c.rate < 1:
		return errors.New("bad flags: need n >= 1, c >= 1, retries >= 0, rate >= 1")
	case c.timeout <= 0 || c.backoff <= 0 || c.per <= 0:
		return errors.New("bad flags: timeout, backoff and per must be greater than zero")
	case !share(c.fail) || !share(c.drop) || !share(c.bad) || !share(c.slow) || c.fail+c.drop > 1:
		return errors.New("bad flags: fail, drop, bad and slow are shares in 0..1, and fail+drop <= 1")
	case c.margin < 0 || c.margin > 1:
		return errors.New("bad flags: margin must be in 0..1")
	case c.slowMin < 0 || c.slowMax < c.slowMin:
		return errors.New("bad flags: need 0 <= slow-min <= slow-max")
	case c.dashboard != "":
		return checkLoopback(c.dashboard)
	}
	return nil
}

// run starts the server, builds the stack, sends the batch with progress,
// prints the summary and closes everything. Its error says what did not go
// as configured (the summary has the details).
func run(ctx context.Context, w io.Writer, cfg config) (err error) {
	if err := cfg.check(); err != nil {
		return err
	}
	if cfg.seed == 0 {
		cfg.seed = uint64(time.Now().UnixNano())
	}
	srv, err := startServer(cfg.serverConfig())
	if err != nil {
		return err
	}
	defer srv.stop()

	// Closing: the stack (outermost stage first), the client's idle
	// connections, the actor system, then the server (deferred above).
	sys := actors.NewSystem()
	defer func() { err = errors.Join(err, closing(ctx, sys.Shutdown)) }()
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: cfg.concurrency}}
	defer hc.CloseIdleConnections()
	var dash *troupehttp.Dashboard
	if cfg.dashboard != "" {
		if dash, err = troupehttp.NewDashboard(); err != nil {
			return err
		}
	}
	stack, err := buildStack(sys, hc, cfg, dash)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, closing(ctx, stack.Close)) }()
	if dash != nil {
		if err := dash.Register(pipeline, stack); err != nil {
			return err
		}
		stop, serr := serveDashboard(w, cfg.dashboard, dash)
		if serr != nil {
			return serr
		}
		defer func() { err = errors.Join(err, closing(ctx, stop)) }()
	}

	fmt.Fprintf(w, "OCR client: %d images to %s (seed %d)\n", cfg.requests, srv.url, cfg.seed)
	fmt.Fprintf(w, "server: %s\n", cfg.serverConfig())
	fmt.Fprintf(w, "stack, outermost first: %s\n", cfg.stackLine())

	var t tally
	start := time.Now()
	p := startProgress(w, isTerminal(w), func() string { return progressLine(time.Since(start), &t, stack, srv, cfg) })
	send(ctx, stack, srv.url, cfg, &t)
	elapsed := time.Since(start)
	p.finish()

	s := summarize(cfg, elapsed, &t, srv.results(cfg.per))
	if ctx.Err() != nil {
		s.problems = append(s.problems, "interrupted: "+context.Cause(ctx).Error())
	}
	s.print(w)
	if dash != nil && ctx.Err() == nil {
		fmt.Fprintln(w, "dashboard: still serving; interrupt (Ctrl-C) to end")
		<-ctx.Done()
	}
	return s.verdict()
}

// closeTimeout bounds each close at the end of a run.
var closeTimeout = 5 * time.Second

// closing calls close with a context of its own, made now: every request
// has its outcome by then, so closing is quick, but it is bounded, and it
// runs even when ctx was cancelled (an interrupt).
func closing(ctx context.Context, close func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), closeTimeout)
	defer cancel()
	return close(ctx)
}
