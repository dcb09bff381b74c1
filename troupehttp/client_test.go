package troupehttp_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/troupehttp"
)

// Every status is a response with a nil error; the bodies of retryable
// statuses come back held (in memory, the connection's body closed), the
// others streaming from the connection.
func TestClient_StatusesAreResponsesAndRetryableOnesAreHeld(t *testing.T) {
	for _, tc := range []struct {
		code int
		held bool
	}{
		{http.StatusOK, false},
		{http.StatusNotFound, false},
		{http.StatusTooManyRequests, true},
		{http.StatusServiceUnavailable, true},
	} {
		t.Run(http.StatusText(tc.code), func(t *testing.T) {
			ctx := testCtx(t)
			srv := newScripted(t, tc.code)
			hc, cnt := newClient(t)
			r, err := http.NewRequest(http.MethodGet, srv.URL, nil)
			require.NoError(t, err)
			resp, err := troupe.Do(ctx, troupehttp.Client(hc), r)
			require.NoError(t, err, "a status is not an error")
			assert.Equal(t, tc.code, resp.StatusCode)
			assert.Equal(t, tc.held, troupehttp.Held(resp))
			if tc.held {
				assert.EqualValues(t, 1, cnt.closed.Load(), "a held body's connection body is closed by the leaf")
			} else {
				assert.EqualValues(t, 0, cnt.closed.Load(), "an unheld body is the caller's to close")
			}
			assert.Contains(t, readBody(t, resp), "from attempt 1")
			assert.EqualValues(t, 1, cnt.closed.Load())
		})
	}
}

// A transport error is an error, with no response.
func TestClient_TransportErrorIsAnError(t *testing.T) {
	ctx := testCtx(t)
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	hc, _ := newClient(t)
	r, err := http.NewRequest(http.MethodGet, url, nil)
	require.NoError(t, err)
	resp, err := troupe.Do(ctx, troupehttp.Client(hc), r)
	require.Error(t, err)
	assert.Nil(t, resp)
}

type ctxKey struct{}

// The request is sent with the call's context, not its own, and the
// caller's request is left as it was.
func TestClient_SendsWithTheCallsContext(t *testing.T) {
	srv := newScripted(t, http.StatusOK)
	hc, cnt := newClient(t)
	r, err := http.NewRequest(http.MethodGet, srv.URL, nil)
	require.NoError(t, err)
	ctx := context.WithValue(testCtx(t), ctxKey{}, "stage")
	resp, err := troupe.Do(ctx, troupehttp.Client(hc), r)
	require.NoError(t, err)
	readBody(t, resp)
	sent := cnt.lastCtx.Load().(ctxBox)
	assert.Equal(t, "stage", sent.Value(ctxKey{}), "the request went with the call's context")
	assert.Nil(t, r.Context().Value(ctxKey{}), "the caller's request was not modified")
}

// A retryable status whose body is over the hold limit is not held: the
// caller gets the whole body from the connection.
func TestClient_BodyOverHoldLimitIsNotHeld(t *testing.T) {
	ctx := testCtx(t)
	big := strings.Repeat("x", 1000)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
		io.WriteString(w, big)
	}))
	t.Cleanup(srv.Close)
	hc, cnt := newClient(t)
	r, err := http.NewRequest(http.MethodGet, srv.URL, nil)
	require.NoError(t, err)
	resp, err := troupe.Do(ctx, troupehttp.Client(hc, troupehttp.HoldLimit(100)), r)
	require.NoError(t, err)
	assert.False(t, troupehttp.Held(resp))
	assert.False(t, troupehttp.Retryable(resp, nil), "an unheld response is never retried")
	assert.Equal(t, big, readBody(t, resp), "nothing of the body was lost")
	assert.EqualValues(t, 1, cnt.closed.Load())
}

// HoldStatus() holds nothing.
func TestClient_HoldStatusNoneHoldsNothing(t *testing.T) {
	ctx := testCtx(t)
	srv := newScripted(t, http.StatusServiceUnavailable)
	hc, _ := newClient(t)
	r, err := http.NewRequest(http.MethodGet, srv.URL, nil)
	require.NoError(t, err)
	resp, err := troupe.Do(ctx, troupehttp.Client(hc, troupehttp.HoldStatus()), r)
	require.NoError(t, err)
	assert.False(t, troupehttp.Held(resp))
	readBody(t, resp)
}

// A body that breaks while the leaf holds it is a transport error (and is
// retried as one).
func TestClient_ReadErrorWhileHoldingIsAnError(t *testing.T) {
	ctx := testCtx(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		conn, buf, err := w.(http.Hijacker).Hijack()
		if err != nil {
			return
		}
		defer conn.Close()
		buf.WriteString("HTTP/1.1 503 Service Unavailable\r\nContent-Length: 100\r\n\r\nshort")
		_ = buf.Flush()
	}))
	t.Cleanup(srv.Close)
	hc, cnt := newClient(t)
	r, err := http.NewRequest(http.MethodGet, srv.URL, nil)
	require.NoError(t, err)
	resp, err := troupe.Do(ctx, troupehttp.Client(hc), r)
	require.Error(t, err)
	assert.True(t, errors.Is(err, io.ErrUnexpectedEOF), "got %v", err)
	assert.Nil(t, resp)
	assert.EqualValues(t, 1, cnt.closed.Load(), "the broken body was closed")
	assert.True(t, troupehttp.Retryable(nil, err))
}

// blocking is a server whose first n requests wait until the client gives
// up (or the test ends, or 10 s pass: a safety net that turns a client that
// never gives up into a failure instead of a hang), and whose later ones
// get "ok". arrived gets a token per waiting request.
func blocking(t *testing.T, n int64) (srv *httptest.Server, arrived chan struct{}, calls *atomic.Int64) {
	release := make(chan struct{})
	arrived = make(chan struct{}, 16)
	calls = new(atomic.Int64)
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) <= n {
			arrived <- struct{}{}
			select {
			case <-r.Context().Done():
			case <-release:
			case <-time.After(10 * time.Second):
			}
			return
		}
		io.WriteString(w, "ok")
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) }) // first: srv.Close waits for handlers
	return srv, arrived, calls
}

// The error of a call whose context ended matches ErrCallEnded and the
// context's error, and is not retryable; an error with the context alive
// does not match it.
func TestClient_ErrorOfAnEndedCallMatchesErrCallEnded(t *testing.T) {
	srv, arrived, _ := blocking(t, 1)
	hc, _ := newClient(t)
	r, err := http.NewRequest(http.MethodGet, srv.URL, nil)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(testCtx(t))
	go func() {
		<-arrived
		cancel()
	}()
	resp, err := troupe.Do(ctx, troupehttp.Client(hc), r)
	assert.Nil(t, resp)
	assert.ErrorIs(t, err, troupehttp.ErrCallEnded)
	assert.ErrorIs(t, err, context.Canceled)
	var ue *url.Error
	assert.ErrorAs(t, err, &ue, "still http.Client.Do's error underneath")
	assert.False(t, troupehttp.Retryable(nil, err))

	srv.Close()
	_, err = troupe.Do(testCtx(t), troupehttp.Client(hc), r)
	require.Error(t, err)
	assert.NotErrorIs(t, err, troupehttp.ErrCallEnded)
}
