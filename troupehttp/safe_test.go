package troupehttp_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/stages"
	"github.com/troupe-go/troupe/stages/retry"
	"github.com/troupe-go/troupe/troupehttp"
	"github.com/troupe-go/troupe/troupetest"
)

// resetting is a backend handler that reads the request's body and then
// drops the connection without an answer: the request was processed, and
// the client sees a transport error.
func resetting(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	conn, _, err := http.NewResponseController(w).Hijack()
	if err == nil {
		conn.Close()
	}
}

// tries is an http.RoundTripper that counts the requests it was given.
type tries struct {
	base http.RoundTripper
	n    atomic.Int64
}

func (c *tries) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return c.base.RoundTrip(r)
}

// retrying builds Retry(3) over Send(a fresh transport, counted) and
// returns it with the count of requests sent. A fresh transport makes
// every attempt's connection a new one, so that net/http's own retry on a
// reused connection never adds one.
func retrying(t *testing.T, p troupehttp.Policy) (*troupe.Stack[req, res], *tries) {
	t.Helper()
	c := &tries{base: newBackendTransport(t)}
	sys := troupetest.NewSystem(t)
	st, err := stages.Stack[req, res]().Layer(retry.Layer[req, res](p)).Build(sys, troupehttp.Send(c))
	require.NoError(t, err)
	closeStack(t, st)
	return st, c
}

// A request the backend read before its connection was reset is sent
// again only when that is safe: an idempotent method, an Idempotency-Key
// (or X-Idempotency-Key) header, or a policy that says so. A POST, and a
// PUT (net/http's rule), are sent once, and the caller gets the transport
// error itself.
//
// spec: HT4
func TestARequestResetAfterTheBackendReadItIsResentOnlyWhenSafe(t *testing.T) {
	be := newBackend(t, resetting)
	always := troupehttp.RetryPolicy(3, nil)
	always.Idempotent = func(*http.Request) bool { return true }
	for _, c := range []struct {
		name, method, header string
		policy               troupehttp.Policy
		sent                 int64
	}{
		{"POST", http.MethodPost, "", troupehttp.RetryPolicy(3, nil), 1},
		{"PUT", http.MethodPut, "", troupehttp.RetryPolicy(3, nil), 1},
		{"PATCH", http.MethodPatch, "", troupehttp.RetryPolicy(3, nil), 1},
		{"POST with Idempotency-Key", http.MethodPost, "Idempotency-Key", troupehttp.RetryPolicy(3, nil), 4},
		{"POST with X-Idempotency-Key", http.MethodPost, "X-Idempotency-Key", troupehttp.RetryPolicy(3, nil), 4},
		{"POST, a policy retrying every method", http.MethodPost, "", always, 4},
		{"GET", http.MethodGet, "", troupehttp.RetryPolicy(3, nil), 4},
	} {
		t.Run(c.name, func(t *testing.T) {
			be.hits.Store(0)
			st, sent := retrying(t, c.policy)
			r, err := http.NewRequest(c.method, be.URL, strings.NewReader("charge the card"))
			require.NoError(t, err)
			if c.header != "" {
				r.Header.Set(c.header, "order-17")
			}
			_, err = troupe.Do(testCtx(t), st, r)
			require.Error(t, err)
			assert.Equal(t, c.sent, sent.n.Load())
			assert.Equal(t, c.sent, be.hits.Load(), "times the backend processed it")
			assert.Equal(t, c.sent > 1, errorsIs(err, retry.ErrExhausted))
		})
	}
}

// Through a gateway whose request bodies can be replayed: a client's
// POST whose backend connection is reset is answered 502 and was
// processed once; one with an Idempotency-Key is sent again.
//
// spec: HT4 HT6
func TestAProxiedPOSTIsNeverSentTwiceAfterAReset(t *testing.T) {
	be := newBackend(t, resetting)
	g := newReplayingGateway(t, be.URL, gatewayStack())
	for _, key := range []string{"", "order-17"} {
		be.hits.Store(0)
		r, err := http.NewRequest(http.MethodPost, g.URL, strings.NewReader("charge the card"))
		require.NoError(t, err)
		if key != "" {
			r.Header.Set("Idempotency-Key", key)
		}
		resp, err := newUser(t).Do(r)
		require.NoError(t, err)
		assert.Equal(t, http.StatusBadGateway, resp.StatusCode)
		readBody(t, resp)
		if key == "" {
			assert.EqualValues(t, 1, be.hits.Load(), "processed once")
		} else {
			assert.EqualValues(t, 4, be.hits.Load(), "sent again: it carries a key")
		}
	}
}

// A POST that never left (its connection could not be made) may be sent
// again whatever its method.
//
// spec: HT4
func TestAPOSTThatNeverLeftIsRetried(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	st, sent := retrying(t, troupehttp.RetryPolicy(3, nil))
	r, err := http.NewRequest(http.MethodPost, url, strings.NewReader("x"))
	require.NoError(t, err)
	_, err = troupe.Do(testCtx(t), st, r)
	assert.ErrorIs(t, err, retry.ErrExhausted)
	assert.True(t, troupehttp.NotSent(err))
	assert.EqualValues(t, 4, sent.n.Load())
}

// Exactly 429, 500, 502, 503 and 504 are retried; no other status.
//
// spec: HT4
func TestExactlyTheDocumentedStatusesAreRetried(t *testing.T) {
	for code, retried := range map[int]bool{
		429: true, 500: true, 502: true, 503: true, 504: true,
		400: false, 404: false, 409: false, 501: false, 505: false, 507: false,
	} {
		srv := newScripted(t, code, 200)
		st, _ := retrying(t, troupehttp.RetryPolicy(3, nil))
		resp := get(t, st, srv.URL)
		readBody(t, resp)
		if retried {
			assert.Equal(t, 200, resp.StatusCode, "%d is retried", code)
		} else {
			assert.Equal(t, code, resp.StatusCode, "%d is not retried", code)
			assert.Len(t, srv.received(), 1)
		}
	}
}

// A panic in the leaf is a bug, not a transient failure: it is not
// retried.
//
// spec: HT4
func TestAPanicIsNotRetried(t *testing.T) {
	var calls atomic.Int64
	leaf := actors.Func(func(context.Context, req) (res, error) {
		calls.Add(1)
		panic("bug")
	})
	sys := troupetest.NewSystem(t)
	st, err := stages.Stack[req, res]().Layer(troupehttp.Retry(3, nil)).Build(sys, leaf)
	require.NoError(t, err)
	closeStack(t, st)
	r, err := http.NewRequest(http.MethodGet, "http://example.invalid/", nil)
	require.NoError(t, err)
	_, err = troupe.Do(testCtx(t), st, r)
	assert.ErrorIs(t, err, troupe.ErrPanic)
	assert.EqualValues(t, 1, calls.Load())
}

func errorsIs(err, target error) bool { return errors.Is(err, target) }
