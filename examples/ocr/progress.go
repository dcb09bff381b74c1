package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/troupe-go/troupe"
)

// progress shows how a run goes while it lasts. On a terminal it rewrites
// one line (\r) five times a second; otherwise (a pipe, a file, a test's
// buffer) it prints a line every second, so that the output stays readable.
// Either way finish prints the final state once more. Only its goroutine
// writes to w until finish returns.
type progress struct {
	w     io.Writer
	tty   bool
	line  func() string
	stop  chan struct{}
	done  chan struct{}
	width int // the longest line written on the terminal; owned by the goroutine, then by finish
}

func startProgress(w io.Writer, tty bool, line func() string) *progress {
	p := &progress{w: w, tty: tty, line: line, stop: make(chan struct{}), done: make(chan struct{})}
	every := time.Second
	if tty {
		every = 200 * time.Millisecond
	}
	go func() {
		defer close(p.done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-p.stop:
				return
			case <-t.C:
				p.write(p.line())
			}
		}
	}()
	return p
}

// finish stops the updates and writes the final line.
func (p *progress) finish() {
	close(p.stop)
	<-p.done
	p.write(p.line())
	if p.tty {
		fmt.Fprintln(p.w)
	}
}

func (p *progress) write(line string) {
	if !p.tty {
		fmt.Fprintln(p.w, "progress:", line)
		return
	}
	pad := max(p.width-len(line), 0) // blank what a longer line left
	p.width = max(p.width, len(line))
	fmt.Fprintf(p.w, "\r%s%s", line, strings.Repeat(" ", pad))
}

// progressLine is one look at the run: requests done of the total, in
// flight (holding a permit of the concurrency limit), waiting for one,
// retries the server saw, and its current rate: the requests it saw in the
// last period. It fits in 80 columns with the default flags: a line that
// wraps cannot be rewritten with \r. The counts are read at slightly
// different moments: waiting is an estimate.
func progressLine(elapsed time.Duration, t *tally, st *troupe.Stack[request, response], srv *server, cfg config) string {
	lim, _ := st.Stats("limit") // its slots in use: the sessions in flight
	done, inFlight := t.count(), lim.Used
	retries, recent := srv.now(cfg.per)
	return fmt.Sprintf("%5.1fs  %d/%d done, %d in flight, %d waiting, %d retries, rate %d/%v (limit %d)",
		elapsed.Seconds(), done, cfg.requests, inFlight, max(cfg.requests-done-inFlight, 0), retries, recent, cfg.per, cfg.rate)
}

// isTerminal reports whether w is a terminal (a character device: so is
// /dev/null, where \r does no harm).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
