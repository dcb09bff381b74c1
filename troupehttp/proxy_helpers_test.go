package troupehttp_test

import (
	"context"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/stages"
	"github.com/troupe-go/troupe/troupehttp"
	"github.com/troupe-go/troupe/troupetest"
)

// backend is a loopback server behind a gateway: it counts the
// connections it accepted and the requests it got.
type backend struct {
	*httptest.Server
	conns, hits atomic.Int64
}

// newBackend starts a backend running h.
func newBackend(t *testing.T, h http.HandlerFunc) *backend {
	t.Helper()
	b := &backend{}
	b.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b.hits.Add(1)
		h(w, r)
	}))
	countConns(b.Server, &b.conns)
	b.Start()
	t.Cleanup(b.Close)
	return b
}

// gateway is httputil.ReverseProxy in front of one backend, served on
// loopback, over troupehttp.Transport of a stack ending in a Send leaf
// (or over a plain transport: see newPlainGateway).
type gateway struct {
	*httptest.Server
	proxy *httputil.ReverseProxy
	stack *troupe.Stack[req, res] // nil for a plain gateway
}

// gatewayStack is the usual stack of these tests: a limit, a timeout, a
// retry of what is safe.
func gatewayStack() stages.Builder[req, res] {
	return stages.Stack[req, res]().Limit(64).Timeout(10 * time.Second).Layer(troupehttp.Retry(3, nil))
}

// newGateway builds b over Send(a transport of its own) and serves a
// ReverseProxy over its Transport in front of target, with ErrorHandler.
func newGateway(t *testing.T, target string, b stages.Builder[req, res], opts ...troupehttp.TransportOption) *gateway {
	t.Helper()
	return buildGateway(t, target, b, false, opts)
}

// newReplayingGateway is newGateway whose proxy makes every request's body
// replayable (troupehttp.Replayable in its Rewrite): a server's request
// body can be read once, so without it a retry stage sends a request with
// a body once, whatever its method.
func newReplayingGateway(t *testing.T, target string, b stages.Builder[req, res]) *gateway {
	t.Helper()
	return buildGateway(t, target, b, true, nil)
}

func buildGateway(t *testing.T, target string, b stages.Builder[req, res], replay bool, opts []troupehttp.TransportOption) *gateway {
	t.Helper()
	sys := troupetest.NewSystem(t)
	st, err := b.Build(sys, troupehttp.Send(newBackendTransport(t)))
	require.NoError(t, err)
	closeStack(t, st)
	g := serveProxy(t, target, troupehttp.Transport(st, opts...), replay)
	g.stack = st
	return g
}

// newPlainGateway is the same ReverseProxy over net/http's own Transport:
// the peer every case is checked against.
func newPlainGateway(t *testing.T, target string) *gateway {
	t.Helper()
	return serveProxy(t, target, newBackendTransport(t), false)
}

// newBackendTransport is an http.Transport of the test's own, as
// http.DefaultTransport is configured but keeping 64 idle connections per
// host; its idle connections are closed when the test ends.
func newBackendTransport(t *testing.T) *http.Transport {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 64
	t.Cleanup(tr.CloseIdleConnections)
	return tr
}

func serveProxy(t *testing.T, target string, rt http.RoundTripper, replay bool) *gateway {
	t.Helper()
	u, err := url.Parse(target)
	require.NoError(t, err)
	p := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(u)
			if !replay {
				return
			}
			if r, _ := troupehttp.Replayable(pr.Out, 1<<20); r != nil {
				pr.Out.Body, pr.Out.GetBody, pr.Out.ContentLength = r.Body, r.GetBody, r.ContentLength
			}
		},
		Transport:    rt,
		ErrorHandler: troupehttp.ErrorHandler,
		ErrorLog:     log.New(io.Discard, "", 0),
	}
	g := &gateway{proxy: p, Server: httptest.NewServer(p)}
	t.Cleanup(g.Close)
	return g
}

// newUser returns the client of a gateway: a transport of its own, no
// redirect followed (a 302 is what it gets).
func newUser(t *testing.T) *http.Client {
	tr := &http.Transport{MaxIdleConnsPerHost: 64}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}
}

// used returns how many slots of the stack's stage name are taken.
func used(t *testing.T, st *troupe.Stack[req, res], name string) int {
	t.Helper()
	s, ok := st.Stats(name)
	require.True(t, ok, "no stage %q", name)
	return s.Used
}

// eventually polls cond until it holds, and fails the test if ctx ends
// first. There is no event to wait on across a network: the condition,
// not the time, decides.
func eventually(t *testing.T, ctx context.Context, what string, cond func() bool) {
	t.Helper()
	if !poll(ctx, cond) {
		t.Fatalf("never: %s", what)
	}
}

// poll reports whether cond came to hold before ctx ended.
func poll(ctx context.Context, cond func() bool) bool {
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-tick.C:
		case <-ctx.Done():
			return false
		}
	}
	return true
}
