// Command breaker shows troupe's circuit breaker against a downstream that
// goes down for a while: it starts an HTTP server on loopback that answers
// well, then fails every request for -outage (10 s by default), then
// recovers. Callers send requests through
//
//	breaker (failure rate 50 % of the last 20 calls, at least 10) -> timeout 1 s -> http.Client
//
// at a steady pace throughout. The breaker opens soon after the outage
// starts: from then on callers fail fast with breaker.ErrOpen, and the
// server sees only the breaker's trial calls, one every open delay (which
// grows while the outage lasts). After the server recovers, a trial call
// succeeds and the breaker closes. The program prints each state change
// and a summary, and fails (exit status 1) if the breaker did not protect
// the server or did not close again.
//
//	go run ./examples/breaker
//	go run ./examples/breaker -outage 3s -c 8
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sync"
	"time"
)

// config is one run's settings; main fills it from the flags.
type config struct {
	before, outage, after time.Duration // healthy, down, healthy again
	callers               int           // concurrent callers
	pace                  time.Duration // each caller's pause between calls
	openDelay             time.Duration // the breaker's first open delay (it doubles, up to 4x)
	timeout               time.Duration // deadline of one call
}

func main() {
	var cfg config
	flag.DurationVar(&cfg.before, "before", 2*time.Second, "how long the server is healthy first")
	flag.DurationVar(&cfg.outage, "outage", 10*time.Second, "how long the server fails every request")
	flag.DurationVar(&cfg.after, "after", 3*time.Second, "how long the run goes on after the server recovers")
	flag.IntVar(&cfg.callers, "c", 4, "concurrent callers")
	flag.DurationVar(&cfg.pace, "pace", 20*time.Millisecond, "each caller's pause between calls")
	flag.DurationVar(&cfg.openDelay, "open", 500*time.Millisecond, "the breaker's first open delay (it doubles while the outage lasts, up to 4x)")
	flag.DurationVar(&cfg.timeout, "timeout", time.Second, "deadline of one call")
	flag.Parse()
	if err := run(context.Background(), os.Stdout, cfg); err != nil {
		fmt.Fprintln(os.Stderr, "breaker:", err)
		os.Exit(1)
	}
}

func (c config) check() error {
	if c.before <= 0 || c.outage <= 0 || c.after <= 0 || c.callers < 1 || c.pace < 0 || c.openDelay <= 0 || c.timeout <= 0 {
		return errors.New("bad flags: durations must be positive, c >= 1")
	}
	if c.after < 3*c.openDelay {
		return fmt.Errorf("bad flags: -after (%v) must leave the breaker time to close again (at least 3 open delays, %v)", c.after, 3*c.openDelay)
	}
	return nil
}

// run starts the server, runs the callers through the three phases, and
// reports; its error says what did not go as expected.
func run(ctx context.Context, w io.Writer, cfg config) error {
	if err := cfg.check(); err != nil {
		return err
	}
	srv, err := startServer()
	if err != nil {
		return err
	}
	defer srv.stop()
	start := time.Now()
	var mu sync.Mutex // the breaker's callback and the run both log
	say := func(line string) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(w, "%6.2fs  %s\n", time.Since(start).Seconds(), line)
	}
	p, err := newPipeline(srv.url, cfg, say)
	if err != nil {
		return err
	}
	defer p.close(ctx)

	say(fmt.Sprintf("server up; %d callers, one call each every %v", cfg.callers, cfg.pace))
	tally := p.drive(ctx, cfg, srv, say)
	mu.Lock()
	defer mu.Unlock()
	return tally.report(w, p.snapshot())
}
