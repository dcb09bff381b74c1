package troupehttp_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"time"

	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/backoff"
	"github.com/troupe-go/troupe/stages"
	"github.com/troupe-go/troupe/troupehttp"
)

// A troupe stack (limit, timeout, retry over the Send leaf) inside an
// http.Client: the flaky server's two 503s are retried, and the POST's
// body is sent again each time (the POST carries an Idempotency-Key:
// without one, it would be sent once).
func Example() {
	ctx := context.Background()
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if calls.Add(1) < 3 {
			http.Error(w, "busy, try again", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintf(w, "got %q", body)
	}))
	defer srv.Close()

	sys := actors.NewSystem()
	defer sys.Shutdown(ctx)
	inner := &http.Transport{}
	defer inner.CloseIdleConnections()

	bo, _ := backoff.New(time.Millisecond, 10*time.Millisecond)
	stack, err := stages.Stack[*http.Request, *http.Response]().
		Limit(8).
		Timeout(5*time.Second).
		Layer(troupehttp.Retry(3, bo)).
		Build(sys, troupehttp.Send(inner))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer stack.Close(ctx)

	hc := &http.Client{Transport: troupehttp.Transport(stack)}
	post, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, strings.NewReader("ping"))
	post.Header.Set("Idempotency-Key", "ping-1") // a POST is retried only with one
	resp, err := hc.Do(post)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	fmt.Println(resp.Status, string(body), "after", calls.Load(), "attempts")
	// Output: 200 OK got "ping" after 3 attempts
}

// A body that can be read only once is made replayable up front.
func ExampleReplayable() {
	r, _ := http.NewRequest(http.MethodPost, "http://example.com/", io.NopCloser(strings.NewReader("once")))
	_, ok := troupehttp.CloneRequest(r)
	fmt.Println("copyable before:", ok)

	r, err := troupehttp.Replayable(r, troupehttp.DefaultReplayLimit)
	if err != nil {
		fmt.Println(err)
		return
	}
	c, ok := troupehttp.CloneRequest(r)
	body, _ := io.ReadAll(c.Body)
	fmt.Println("copyable after:", ok, string(body))
	// Output:
	// copyable before: false
	// copyable after: true once
}
