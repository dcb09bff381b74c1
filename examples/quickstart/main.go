// Command quickstart builds a stack of four stages over a function that
// calls an HTTP server on loopback, and calls it twice.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"time"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/backoff"
	"github.com/troupe-go/troupe/stages"
	"github.com/troupe-go/troupe/stages/ratelimit"
)

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, w io.Writer) (err error) {
	// The downstream: an HTTP server on loopback.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "item %s", r.URL.Query().Get("id"))
	}))
	defer srv.Close()

	sys := actors.NewSystem() // quiet; actors.WithLogger(l) to see protoactor's logs
	defer func() { err = errors.Join(err, sys.Shutdown(ctx)) }()

	api := actors.Func(func(ctx context.Context, id int) (string, error) {
		return fetch(ctx, srv.Client(), srv.URL, id) // runs on the caller's goroutine; may block; honours ctx
	})
	bo, err := backoff.New(100*time.Millisecond, 2*time.Second, backoff.WithJitter(backoff.Full))
	if err != nil {
		return err
	}
	// The types once; the first stage added is the outermost.
	svc, err := stages.Stack[int, string]().
		Limit(20).                                           // at most 20 sessions in flight
		Timeout(10*time.Second).                             // the whole session, retries included
		Retry(3, bo).                                        // up to 3 retries, after backoff
		RateLimit(ratelimit.Rate{Num: 5, Per: time.Second}). // innermost: every attempt counts
		Build(sys, api)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, svc.Close(ctx)) }()

	out, err := troupe.Do(ctx, svc, 42) // reserve + call in one line
	if err != nil {
		return err
	}
	fmt.Fprintln(w, out)

	p, err := svc.Reserve(ctx) // or: wait for readiness...
	if err != nil {
		return err
	}
	out, err = p.Call(ctx, 43) // ...and call with the permit, exactly once
	if err != nil {
		return err
	}
	fmt.Fprintln(w, out)

	lim, _ := svc.Stats("limit") // a stage's counters, by name
	fmt.Fprintln(w, lim.Used, "of", lim.Capacity, "in flight")
	return nil
}

// fetch gets item id from the server at base.
func fetch(ctx context.Context, c *http.Client, base string, id int) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("%s/item?id=%d", base, id), nil)
	if err != nil {
		return "", err
	}
	res, err := c.Do(req)
	if err != nil {
		return "", err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		return "", err
	}
	if res.StatusCode != http.StatusOK {
		return "", fmt.Errorf("item %d: %s", id, res.Status)
	}
	return string(body), nil
}
