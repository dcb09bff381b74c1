// Command quickstart runs a real troupe pipeline: a Buffer stage over a
// function that calls a flaky HTTP server on loopback, which the program
// starts itself. It prints each request's outcome and a summary.
//
//	go run ./examples/quickstart
//	go run ./examples/quickstart -n 50 -fail 0.3
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/stages"
)

type config struct {
	requests int     // how many requests to send
	callers  int     // concurrent callers
	fail     float64 // share of requests the server fails with 500
	buffer   int     // buffer capacity
	quiet    bool    // print only the summary
}

func main() {
	var cfg config
	flag.IntVar(&cfg.requests, "n", 20, "requests to send")
	flag.IntVar(&cfg.callers, "c", 4, "concurrent callers")
	flag.Float64Var(&cfg.fail, "fail", 0.2, "share of requests the server fails (0..1)")
	flag.IntVar(&cfg.buffer, "buffer", 8, "buffer capacity")
	flag.BoolVar(&cfg.quiet, "q", false, "print only the summary")
	flag.Parse()
	if err := run(context.Background(), os.Stdout, cfg); err != nil {
		fmt.Fprintln(os.Stderr, "quickstart:", err)
		os.Exit(1)
	}
}

// summary is what a run did.
type summary struct {
	ok, failed int
}

func run(ctx context.Context, w io.Writer, cfg config) error {
	if cfg.requests < 1 || cfg.callers < 1 || cfg.fail < 0 || cfg.fail > 1 {
		return errors.New("bad flags: need n >= 1, c >= 1, 0 <= fail <= 1")
	}
	url, stop, err := startFlakyServer(cfg.fail)
	if err != nil {
		return err
	}
	defer stop()

	sys := actors.NewSystem()
	defer sys.Shutdown(ctx)
	client := &http.Client{Timeout: 5 * time.Second}
	defer client.CloseIdleConnections()
	fetch := actors.Func(func(ctx context.Context, id int) (string, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("%s/item/%d", url, id), nil)
		if err != nil {
			return "", err
		}
		resp, err := client.Do(req)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			return "", fmt.Errorf("server said %s", resp.Status)
		}
		return string(body), err
	}, "http")
	svc, err := stages.Stack[int, string]().
		Buffer(cfg.buffer).
		Build(sys, fetch)
	if err != nil {
		return err
	}
	defer svc.Close(ctx)

	s := send(ctx, w, svc, cfg)
	fmt.Fprintf(w, "summary: %d requests, %d ok, %d failed\n", cfg.requests, s.ok, s.failed)
	return nil
}

// send makes the requests from cfg.callers goroutines.
func send(ctx context.Context, w io.Writer, svc troupe.Service[int, string], cfg config) summary {
	var mu sync.Mutex
	var s summary
	ids := make(chan int)
	var wg sync.WaitGroup
	for range cfg.callers {
		wg.Go(func() {
			for id := range ids {
				out, err := troupe.Do(ctx, svc, id)
				mu.Lock()
				if err != nil {
					s.failed++
					if !cfg.quiet {
						fmt.Fprintf(w, "request %2d: error: %v\n", id, err)
					}
				} else {
					s.ok++
					if !cfg.quiet {
						fmt.Fprintf(w, "request %2d: %s\n", id, out)
					}
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
	return s
}

// startFlakyServer serves /item/{id} on a free loopback port, failing a
// share of requests with 500.
func startFlakyServer(fail float64) (url string, stop func(), err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /item/{id}", func(w http.ResponseWriter, r *http.Request) {
		if rand.Float64() < fail {
			http.Error(w, "flaky", http.StatusInternalServerError)
			return
		}
		fmt.Fprintf(w, "item %s", r.PathValue("id"))
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(ln)
	}()
	return "http://" + ln.Addr().String(), func() {
		_ = srv.Close()
		<-done
	}, nil
}
