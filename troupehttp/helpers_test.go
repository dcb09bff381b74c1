package troupehttp_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
)

type (
	req = *http.Request
	res = *http.Response
)

// testCtx is a context for a test's calls: generous, so that a hang fails
// the test instead of the run.
func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// scripted is a loopback server that answers its n-th request (from 0)
// with status codes[n], the last code repeating, and a body naming the
// status and the attempt. It records every request body it received and
// counts the connections it accepted.
type scripted struct {
	*httptest.Server
	codes []int
	conns atomic.Int64

	mu     sync.Mutex
	bodies []string // request bodies, in arrival order; guarded by mu
}

func newScripted(t *testing.T, codes ...int) *scripted {
	t.Helper()
	s := &scripted{codes: codes}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(s.serve))
	countConns(s.Server, &s.conns)
	s.Start()
	t.Cleanup(s.Close)
	return s
}

// countConns makes the unstarted srv count the connections it accepts in n.
func countConns(srv *httptest.Server, n *atomic.Int64) {
	srv.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			n.Add(1)
		}
	}
}

func (s *scripted) serve(w http.ResponseWriter, r *http.Request) {
	b, err := io.ReadAll(r.Body)
	if err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	n := len(s.bodies)
	s.bodies = append(s.bodies, string(b))
	s.mu.Unlock()
	code := s.codes[min(n, len(s.codes)-1)]
	w.WriteHeader(code)
	fmt.Fprintf(w, "%d from attempt %d", code, n+1)
}

// received returns the request bodies the server got.
func (s *scripted) received() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.bodies...)
}

// counting is an http.RoundTripper that counts the response bodies its
// base transport returned and how many of them were closed, and records
// the context of the last request it sent.
type counting struct {
	base           http.RoundTripper
	opened, closed atomic.Int64
	lastCtx        atomic.Value // context.Context of the last request
}

func (c *counting) RoundTrip(r *http.Request) (*http.Response, error) {
	c.lastCtx.Store(ctxBox{r.Context()})
	resp, err := c.base.RoundTrip(r)
	if err == nil {
		c.opened.Add(1)
		resp.Body = &countedBody{ReadCloser: resp.Body, closed: &c.closed}
	}
	return resp, err
}

type ctxBox struct{ context.Context }

// countedBody counts its first Close.
type countedBody struct {
	io.ReadCloser
	once   sync.Once
	closed *atomic.Int64
}

func (b *countedBody) Close() error {
	b.once.Do(func() { b.closed.Add(1) })
	return b.ReadCloser.Close()
}

// newClient returns an *http.Client with a transport of its own (no
// connection shared with other tests), counting its bodies; its idle
// connections are closed when the test ends, so no goroutine outlives it.
func newClient(t *testing.T) (*http.Client, *counting) {
	t.Helper()
	tr := &http.Transport{MaxIdleConnsPerHost: 64}
	t.Cleanup(tr.CloseIdleConnections)
	c := &counting{base: tr}
	return &http.Client{Transport: c}, c
}

// closeStack closes st when the test ends, before its system shuts down
// (cleanups run last registered first: call it after testsys.New).
func closeStack(t *testing.T, st *troupe.Stack[req, res]) {
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		require.NoError(t, st.Close(ctx))
	})
}

// readBody reads and closes r's body.
func readBody(t *testing.T, r *http.Response) string {
	t.Helper()
	defer r.Body.Close()
	b, err := io.ReadAll(r.Body)
	require.NoError(t, err)
	return string(b)
}

// closeRecorder is a request body that records whether it was closed.
type closeRecorder struct {
	io.Reader
	closed atomic.Bool
}

func (c *closeRecorder) Close() error {
	c.closed.Store(true)
	return nil
}
