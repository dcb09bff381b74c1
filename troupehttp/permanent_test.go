package troupehttp_test

import (
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/stages"
	"github.com/troupe-go/troupe/stages/retry"
	"github.com/troupe-go/troupe/troupehttp"
	"github.com/troupe-go/troupe/troupetest"
)

// An error no retry can cure is marked permanent and sent once: a request
// no client can send (an invalid header name or value, an invalid method,
// an unsupported scheme, no host), a server whose certificate the client
// does not trust, a plain server asked for TLS.
//
// spec: HT4
func TestAnErrorNoRetryCanCureIsPermanentAndSentOnce(t *testing.T) {
	plain := newBackend(t, func(http.ResponseWriter, *http.Request) {})
	untrusted := httptest.NewUnstartedServer(http.NotFoundHandler())
	var handshakes atomic.Int64
	countConns(untrusted, &handshakes)
	untrusted.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshake
	untrusted.StartTLS()
	t.Cleanup(untrusted.Close)

	for _, c := range []struct {
		name string
		req  func() *http.Request
	}{
		{"an invalid header value", func() *http.Request {
			r := httptest.NewRequest(http.MethodGet, plain.URL, nil)
			r.Header.Set("X-Bad", "a\r\nInjected: 1")
			return r
		}},
		{"an invalid header name", func() *http.Request {
			r := httptest.NewRequest(http.MethodGet, plain.URL, nil)
			r.Header["Bad Name"] = []string{"1"}
			return r
		}},
		{"an invalid method", func() *http.Request {
			r := httptest.NewRequest(http.MethodGet, plain.URL, nil)
			r.Method = "BAD METHOD"
			return r
		}},
		{"an unsupported scheme", func() *http.Request {
			r := httptest.NewRequest(http.MethodGet, plain.URL, nil)
			r.URL.Scheme = "gopher"
			return r
		}},
		{"no host", func() *http.Request {
			r := httptest.NewRequest(http.MethodGet, plain.URL, nil)
			r.URL, r.Host = &url.URL{Scheme: "http", Path: "/"}, ""
			return r
		}},
		{"an untrusted certificate", func() *http.Request { return httptest.NewRequest(http.MethodGet, untrusted.URL, nil) }},
		{"TLS to a plain server", func() *http.Request {
			return httptest.NewRequest(http.MethodGet, strings.Replace(plain.URL, "http:", "https:", 1), nil)
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			st, sent := retrying(t, troupehttp.RetryPolicy(3, nil))
			_, err := troupe.Do(testCtx(t), st, c.req())
			require.Error(t, err)
			assert.ErrorIs(t, err, troupe.ErrPermanent)
			assert.NotErrorIs(t, err, retry.ErrExhausted)
			assert.EqualValues(t, 1, sent.n.Load(), "sent once: %v", err)
		})
	}
	assert.EqualValues(t, 1, handshakes.Load(), "the untrusted server was asked once")
	assert.Zero(t, plain.hits.Load(), "no request reached the plain server")
}

// A Client leaf whose http.Client gives up after 10 redirects has its
// error marked permanent: the session ends after one attempt (10 requests
// at the server, not 40).
//
// spec: HT4
func TestTooManyRedirectsArePermanent(t *testing.T) {
	var be *backend
	be = newBackend(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, be.URL+"/again", http.StatusFound)
	})
	hc, _ := newClient(t)
	sys := troupetest.NewSystem(t)
	st, err := stages.Stack[req, res]().Layer(troupehttp.Retry(3, nil)).Build(sys, troupehttp.Client(hc))
	require.NoError(t, err)
	closeStack(t, st)
	_, err = troupe.Do(testCtx(t), st, httptest.NewRequest(http.MethodGet, be.URL, nil))
	require.Error(t, err)
	assert.ErrorIs(t, err, troupe.ErrPermanent)
	assert.EqualValues(t, 10, be.hits.Load())
}

// troupe.Permanent marks an error without hiding it, and nil stays nil.
func TestPermanentKeepsTheErrorItMarks(t *testing.T) {
	err := troupe.Permanent(troupehttp.ErrNilRequest)
	assert.ErrorIs(t, err, troupe.ErrPermanent)
	assert.ErrorIs(t, err, troupehttp.ErrNilRequest)
	assert.Equal(t, troupehttp.ErrNilRequest.Error(), err.Error())
	assert.NoError(t, troupe.Permanent(nil))
	assert.False(t, troupehttp.Retryable(nil, err))
}
