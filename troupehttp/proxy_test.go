package troupehttp_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/stages"
	"github.com/troupe-go/troupe/troupehttp"
	"github.com/troupe-go/troupe/troupetest"
)

// pattern is n bytes of a fixed pattern.
func pattern(n int) []byte { return bytes.Repeat([]byte("0123456789abcdef"), n/16+1)[:n] }

// sizes serves GET /?n=N with N bytes of pattern, written in 64 KiB pieces
// with a flush between them, and answers a POST with the length and
// sha256 of the body it read.
func sizes(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPost {
		h := sha256.New()
		n, err := io.Copy(h, r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		fmt.Fprintf(w, "%d %x", n, h.Sum(nil))
		return
	}
	n, _ := strconv.Atoi(r.URL.Query().Get("n"))
	body := pattern(n)
	w.Header().Set("Content-Length", strconv.Itoa(n))
	for off := 0; off < n; off += 64 << 10 {
		_, _ = w.Write(body[off:min(off+64<<10, n)])
		w.(http.Flusher).Flush()
	}
}

// Small and 10 MB responses and request bodies (of known length and
// chunked) cross ReverseProxy over the Transport byte for byte, and every
// body read to its end leaves the backend connection pooled: the
// requests, one after another, use one.
//
// spec: HT1 HT2
func TestAProxiedBodyArrivesWholeAndLeavesItsConnectionPooled(t *testing.T) {
	be := newBackend(t, sizes)
	g := newGateway(t, be.URL, gatewayStack())
	user := newUser(t)
	for _, n := range []int{0, 100, 10 << 20} {
		resp, err := user.Get(g.URL + "/?n=" + strconv.Itoa(n))
		require.NoError(t, err)
		assert.Equal(t, http.StatusOK, resp.StatusCode)
		got, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.NoError(t, err)
		require.Equal(t, sha256.Sum256(pattern(n)), sha256.Sum256(got), "a %d-byte response: got %d bytes", n, len(got))

		body := pattern(n)
		sum := sha256.Sum256(body)
		want := fmt.Sprintf("%d %s", n, hex.EncodeToString(sum[:]))
		resp, err = user.Post(g.URL+"/", "application/octet-stream", bytes.NewReader(body))
		require.NoError(t, err)
		assert.Equal(t, want, readBody(t, resp))
		if n < 1<<20 {
			resp, err = user.Post(g.URL+"/", "application/octet-stream", io.MultiReader(bytes.NewReader(body)))
			require.NoError(t, err)
			assert.Equal(t, want, readBody(t, resp), "a chunked body")
		}
	}
	assert.EqualValues(t, 1, be.conns.Load(), "every body read to its end left its connection in the pool")
	assert.Zero(t, used(t, g.stack, "limit"))
}

// A HEAD's response has its headers and no body, as over net/http's
// Transport.
//
// spec: HT1
func TestAProxiedHEADHasItsHeadersAndNoBody(t *testing.T) {
	be := newBackend(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "12345")
		w.Header().Set("X-Method", r.Method)
	})
	g := newGateway(t, be.URL, gatewayStack())
	resp, err := newUser(t).Head(g.URL)
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.EqualValues(t, 12345, resp.ContentLength)
	assert.Equal(t, "HEAD", resp.Header.Get("X-Method"))
	assert.Empty(t, readBody(t, resp))
	assert.Zero(t, used(t, g.stack, "limit"))
}

// A backend's 302 to another host reaches the client as a 302: the
// Transport follows no redirect (the other host is never asked). A direct
// http.Client over the Transport follows it itself, as over net/http's
// Transport; a Client leaf follows it inside the stack, which is why
// Transport's setup ends in Send.
//
// spec: HT1
func TestARedirectReachesTheClientAsARedirect(t *testing.T) {
	internal := newBackend(t, func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "internal page") })
	be := newBackend(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, internal.URL+"/secret", http.StatusFound)
	})

	g := newGateway(t, be.URL, gatewayStack())
	resp, err := newUser(t).Get(g.URL + "/x")
	require.NoError(t, err)
	assert.Equal(t, http.StatusFound, resp.StatusCode)
	assert.Equal(t, internal.URL+"/secret", resp.Header.Get("Location"))
	assert.NotContains(t, readBody(t, resp), "internal page")
	assert.Zero(t, internal.hits.Load(), "the gateway never fetched the redirect's target")

	// An http.Client over the Transport follows it, as its own.
	sys := troupetest.NewSystem(t)
	st, err := gatewayStack().Build(sys, troupehttp.Send(newBackendTransport(t)))
	require.NoError(t, err)
	closeStack(t, st)
	resp, err = (&http.Client{Transport: troupehttp.Transport(st)}).Get(be.URL + "/x")
	require.NoError(t, err)
	assert.Equal(t, "internal page", readBody(t, resp))
	assert.EqualValues(t, 1, internal.hits.Load())

	// A Client leaf is an http.Client: it follows redirects itself.
	hc, _ := newClient(t)
	st2, err := stages.Stack[req, res]().Limit(4).Build(sys, troupehttp.Client(hc))
	require.NoError(t, err)
	closeStack(t, st2)
	resp, err = troupehttp.Transport(st2).RoundTrip(httptest.NewRequest(http.MethodGet, be.URL+"/x", nil))
	require.NoError(t, err)
	assert.Equal(t, "internal page", readBody(t, resp))
	assert.EqualValues(t, 2, internal.hits.Load())
}

// A server's request (RequestURI set, as httptest.NewRequest and a server
// make it, and as ReverseProxy forwards it) goes through the Transport
// with either leaf, and is left as it was.
//
// spec: HT1
func TestAServersRequestGoesThroughEitherLeafUnchanged(t *testing.T) {
	be := newBackend(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, r.URL.Path) })
	hc, _ := newClient(t)
	sys := troupetest.NewSystem(t)
	for name, l := range map[string]func() troupe.Service[req, res]{
		"send":   func() troupe.Service[req, res] { return troupehttp.Send(newBackendTransport(t)) },
		"client": func() troupe.Service[req, res] { return troupehttp.Client(hc) },
	} {
		t.Run(name, func(t *testing.T) {
			st, err := gatewayStack().Build(sys, l())
			require.NoError(t, err)
			closeStack(t, st)
			r := httptest.NewRequest(http.MethodGet, be.URL+"/path", nil)
			require.NotEmpty(t, r.RequestURI)
			before := r.RequestURI
			resp, err := troupehttp.Transport(st).RoundTrip(r)
			require.NoError(t, err)
			assert.Equal(t, "/path", readBody(t, resp))
			assert.Equal(t, before, r.RequestURI, "the request was not modified")
		})
	}
}

// Every request net/http's Transport answers, ReverseProxy over the
// Transport answers the same: the same statuses and bodies, no 502 where
// the plain proxy has none. Retries change nothing the client sees
// (the backend's 500 is retried and comes back a 500).
//
// spec: HT1 HT4
func TestAProxyOverTheTransportAnswersAsOverNetHTTPs(t *testing.T) {
	be := newBackend(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/404":
			http.NotFound(w, r)
		case "/500":
			http.Error(w, "broken", http.StatusInternalServerError)
		case "/503":
			http.Error(w, "busy", http.StatusServiceUnavailable)
		case "/302":
			http.Redirect(w, r, "/elsewhere", http.StatusFound)
		default:
			b, _ := io.ReadAll(r.Body)
			fmt.Fprintf(w, "%s %s %q", r.Method, r.URL.RequestURI(), b)
		}
	})
	plain, viaStack := newPlainGateway(t, be.URL), newGateway(t, be.URL, gatewayStack())
	user := newUser(t)
	for _, c := range []struct{ method, path, body string }{
		{"GET", "/", ""}, {"GET", "/a/b?c=d&e=%20", ""}, {"POST", "/form", "x=1"}, {"PUT", "/p", "put"},
		{"DELETE", "/d", ""}, {"PATCH", "/p", "patch"}, {"OPTIONS", "/", ""}, {"GET", "/404", ""},
		{"GET", "/500", ""}, {"POST", "/503", "once"}, {"GET", "/302", ""},
	} {
		var got [2]string
		for i, g := range []*gateway{plain, viaStack} {
			r, err := http.NewRequest(c.method, g.URL+c.path, strings.NewReader(c.body))
			require.NoError(t, err)
			resp, err := user.Do(r)
			require.NoError(t, err)
			got[i] = fmt.Sprintf("%d %s %s", resp.StatusCode, resp.Header.Get("Location"), readBody(t, resp))
		}
		assert.Equal(t, got[0], got[1], "%s %s", c.method, c.path)
		assert.NotContains(t, got[1], "502")
	}
}
