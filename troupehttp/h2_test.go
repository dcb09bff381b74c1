package troupehttp_test

import (
	"bufio"
	"crypto/sha256"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe/troupehttp"
	"github.com/troupe-go/troupe/troupetest"
)

// newH2 starts an HTTP/2 TLS loopback server running h, counting its
// connections, and returns it with a transport that trusts it and speaks
// HTTP/2 to it.
func newH2(t *testing.T, h http.HandlerFunc) (*backend, *http.Transport) {
	t.Helper()
	b := &backend{}
	b.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b.hits.Add(1)
		h(w, r)
	}))
	b.EnableHTTP2 = true
	countConns(b.Server, &b.conns)
	b.StartTLS()
	t.Cleanup(b.Close)
	tr := b.Client().Transport.(*http.Transport).Clone()
	t.Cleanup(tr.CloseIdleConnections)
	return b, tr
}

// 64 requests at once through the Transport over HTTP/2 are 64 concurrent
// streams of one connection, each body whole: the backend answers none
// until all 64 are in its handler. (The connection is made first: 64
// requests to a host with none would each dial one, over net/http's
// Transport alone too.)
//
// spec: HT2
func TestSixtyFourHTTP2StreamsCrossTheStackAtOnce(t *testing.T) {
	const n = 64
	body := pattern(32 << 10)
	want := sha256.Sum256(body)
	var (
		mu      sync.Mutex
		in      int           // requests in the handler; guarded by mu
		all     chan struct{} // closed when in reaches n
		h2, bad atomic.Int64
	)
	all = make(chan struct{})
	be, tr := newH2(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/warm" {
			return
		}
		if r.ProtoMajor == 2 {
			h2.Add(1)
		}
		mu.Lock()
		if in++; in == n {
			close(all)
		}
		mu.Unlock()
		select {
		case <-all:
		case <-r.Context().Done():
			bad.Add(1)
			return
		}
		_, _ = w.Write(body)
	})
	sys := troupetest.NewSystem(t)
	st, err := gatewayStack().Build(sys, troupehttp.Send(tr))
	require.NoError(t, err)
	closeStack(t, st)
	hc := &http.Client{Transport: troupehttp.Transport(st)}
	ctx := testCtx(t)
	resp, err := hc.Get(be.URL + "/warm")
	require.NoError(t, err)
	readBody(t, resp)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for range n {
		wg.Go(func() {
			r, err := http.NewRequestWithContext(ctx, http.MethodGet, be.URL, nil)
			if err != nil {
				errs <- err
				return
			}
			resp, err := hc.Do(r)
			if err != nil {
				errs <- err
				return
			}
			defer resp.Body.Close()
			got, err := io.ReadAll(resp.Body)
			switch {
			case err != nil:
				errs <- err
			case resp.ProtoMajor != 2 || sha256.Sum256(got) != want:
				errs <- fmt.Errorf("%s, %d bytes", resp.Proto, len(got))
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	assert.EqualValues(t, n, h2.Load())
	assert.Zero(t, bad.Load())
	assert.EqualValues(t, 1, be.conns.Load(), "one connection carried every stream")
	assert.Zero(t, used(t, st, "limit"))
}

// A full-duplex HTTP/2 body: the client writes a line, reads the
// backend's echo of it, and writes the next, over one request through the
// Transport (the request's body still streams after RoundTrip has
// returned the response).
//
// spec: HT2
func TestAFullDuplexHTTP2BodyStreamsBothWaysThroughTheStack(t *testing.T) {
	be, tr := newH2(t, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		lines := bufio.NewScanner(r.Body)
		for lines.Scan() {
			fmt.Fprintf(w, "echo %s\n", lines.Text())
			w.(http.Flusher).Flush()
		}
	})
	sys := troupetest.NewSystem(t)
	st, err := gatewayStack().Build(sys, troupehttp.Send(tr))
	require.NoError(t, err)
	closeStack(t, st)
	pr, pw := io.Pipe()
	r, err := http.NewRequestWithContext(testCtx(t), http.MethodPost, be.URL, pr)
	require.NoError(t, err)
	resp, err := (&http.Client{Transport: troupehttp.Transport(st)}).Do(r)
	require.NoError(t, err)
	defer resp.Body.Close()
	assert.Equal(t, 2, resp.ProtoMajor)
	in := bufio.NewReader(resp.Body)
	echoes(t, pw, in, 10, "echo ")
	require.NoError(t, pw.Close())
	rest, err := io.ReadAll(in)
	require.NoError(t, err)
	assert.Empty(t, rest)
	assert.EqualValues(t, 1, be.hits.Load(), "sent once")
}
