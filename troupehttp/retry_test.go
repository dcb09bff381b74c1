package troupehttp_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/stages/retry"
	"github.com/troupe-go/troupe/troupehttp"
	"github.com/troupe-go/troupe/troupetest"
)

// retryStack is retry(RetryPolicy(max), no backoff) over a Client leaf on hc.
func retryStack(t *testing.T, hc *http.Client, max int, opts ...troupehttp.ClientOption) *troupe.Stack[req, res] {
	t.Helper()
	sys := troupetest.NewSystem(t)
	st, err := troupe.NewBuilder[req, res]().
		Layer(retry.Layer[req, res](troupehttp.RetryPolicy(max, nil))).
		Build(sys, troupehttp.Client(hc, opts...))
	require.NoError(t, err)
	closeStack(t, st)
	return st
}

// get sends a GET of url through st and requires that it returns a response.
func get(t *testing.T, st *troupe.Stack[req, res], url string) *http.Response {
	t.Helper()
	r, err := http.NewRequest(http.MethodGet, url, nil)
	require.NoError(t, err)
	resp, err := troupe.Do(testCtx(t), st, r)
	require.NoError(t, err)
	return resp
}

// A POST with a bytes body (and an Idempotency-Key) is retried with its
// body resent intact, with its length known or not (chunked: net/http's transport cannot rewind a body
// for us then, so a body shared between attempts would arrive empty).
func TestRetry_POSTWithBytesBodyIsResentIntact(t *testing.T) {
	for _, chunked := range []bool{false, true} {
		t.Run(fmt.Sprintf("chunked=%v", chunked), func(t *testing.T) {
			ctx := testCtx(t)
			srv := newScripted(t, 503, 502, 200)
			hc, _ := newClient(t)
			st := retryStack(t, hc, 3)
			payload := strings.Repeat("payload-", 512)
			r, err := http.NewRequest(http.MethodPost, srv.URL, bytes.NewReader([]byte(payload)))
			require.NoError(t, err)
			r.Header.Set("Idempotency-Key", "k1")
			if chunked {
				r.ContentLength = -1
			}
			resp, err := troupe.Do(ctx, st, r)
			require.NoError(t, err)
			assert.Equal(t, http.StatusOK, resp.StatusCode)
			assert.Equal(t, "200 from attempt 3", readBody(t, resp))
			assert.Equal(t, []string{payload, payload, payload}, srv.received())
		})
	}
}

// A body without GetBody cannot be replayed: it is sent once, and the 503
// comes back to the caller, readable.
func TestRetry_BodyWithoutGetBodyIsSentOnce(t *testing.T) {
	ctx := testCtx(t)
	srv := newScripted(t, 503, 200)
	hc, _ := newClient(t)
	st := retryStack(t, hc, 3)
	r, err := http.NewRequest(http.MethodPost, srv.URL, io.NopCloser(strings.NewReader("once")))
	require.NoError(t, err)
	require.Nil(t, r.GetBody)
	resp, err := troupe.Do(ctx, st, r)
	require.NoError(t, err)
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	assert.Equal(t, "503 from attempt 1", readBody(t, resp))
	assert.Equal(t, []string{"once"}, srv.received())
}

// Replayable makes the same request retryable.
func TestRetry_ReplayableBodyIsRetried(t *testing.T) {
	ctx := testCtx(t)
	srv := newScripted(t, 503, 200)
	hc, _ := newClient(t)
	st := retryStack(t, hc, 3)
	r, err := http.NewRequest(http.MethodPost, srv.URL, io.NopCloser(strings.NewReader("twice")))
	require.NoError(t, err)
	r.Header.Set("Idempotency-Key", "k1")
	r, err = troupehttp.Replayable(r, troupehttp.DefaultReplayLimit)
	require.NoError(t, err)
	resp, err := troupe.Do(ctx, st, r)
	require.NoError(t, err)
	assert.Equal(t, "200 from attempt 2", readBody(t, resp))
	assert.Equal(t, []string{"twice", "twice"}, srv.received())
}

// A 404 (like every 4xx but 429) is not retried.
func TestRetry_404IsNotRetried(t *testing.T) {
	srv := newScripted(t, 404, 200)
	hc, _ := newClient(t)
	st := retryStack(t, hc, 3)
	resp := get(t, st, srv.URL)
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
	assert.Equal(t, "404 from attempt 1", readBody(t, resp))
	assert.Len(t, srv.received(), 1)
}

// A 429 is retried, and the caller reads the 200's body.
func TestRetry_429Then200(t *testing.T) {
	srv := newScripted(t, 429, 200)
	hc, _ := newClient(t)
	st := retryStack(t, hc, 3)
	resp := get(t, st, srv.URL)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "200 from attempt 2", readBody(t, resp))
	assert.Len(t, srv.received(), 2)
}

// The bodies of the retried 503s were read to the end and closed before the
// caller got the 200: every attempt went over one connection (a body
// closed unread would have cost its connection), and only the 200's body
// was still open.
func TestRetry_DiscardedBodiesAreDrainedAndClosed(t *testing.T) {
	srv := newScripted(t, 503, 503, 200)
	hc, cnt := newClient(t)
	st := retryStack(t, hc, 3)
	resp := get(t, st, srv.URL)
	assert.EqualValues(t, 3, cnt.opened.Load())
	assert.EqualValues(t, 2, cnt.closed.Load(), "the two discarded 503 bodies were closed")
	assert.Equal(t, "200 from attempt 3", readBody(t, resp))
	assert.EqualValues(t, 3, cnt.closed.Load())
	assert.EqualValues(t, 1, srv.conns.Load(), "one connection, reused by every attempt")
}

// When the attempts are spent, the caller gets the last 503, readable,
// with a nil error: a status is not an error.
func TestRetry_AttemptsSpentReturnTheLast503(t *testing.T) {
	srv := newScripted(t, 503)
	hc, cnt := newClient(t)
	st := retryStack(t, hc, 2)
	resp := get(t, st, srv.URL)
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	assert.Equal(t, "503 from attempt 3", readBody(t, resp))
	assert.EqualValues(t, 3, cnt.opened.Load())
	assert.EqualValues(t, 3, cnt.closed.Load())
	assert.EqualValues(t, 1, srv.conns.Load())
}

// A 503 whose body is too long to hold is not retried: the caller gets all
// of it from the connection.
func TestRetry_UnheldStatusIsNotRetried(t *testing.T) {
	srv := newScripted(t, 503, 200)
	hc, _ := newClient(t)
	st := retryStack(t, hc, 3, troupehttp.HoldLimit(4))
	resp := get(t, st, srv.URL)
	assert.Equal(t, "503 from attempt 1", readBody(t, resp))
	assert.Len(t, srv.received(), 1)
}

// dropFirst is a server that drops the connection of its first n requests
// without answering (a transport error for the client), then answers 200.
func dropFirst(t *testing.T, n int64) (*httptest.Server, *atomic.Int64) {
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if calls.Add(1) <= n {
			if conn, _, err := w.(http.Hijacker).Hijack(); err == nil {
				conn.Close()
			}
			return
		}
		io.WriteString(w, "ok")
	}))
	t.Cleanup(srv.Close)
	return srv, &calls
}

// A transport error is retried; when the attempts are spent the caller gets
// a *retry.ExhaustedError wrapping it.
func TestRetry_TransportErrorsAreRetried(t *testing.T) {
	ctx := testCtx(t)
	t.Run("then success", func(t *testing.T) {
		srv, calls := dropFirst(t, 1)
		hc, _ := newClient(t)
		st := retryStack(t, hc, 3)
		resp := get(t, st, srv.URL)
		assert.Equal(t, "ok", readBody(t, resp))
		assert.EqualValues(t, 2, calls.Load())
	})
	t.Run("spent", func(t *testing.T) {
		srv, calls := dropFirst(t, 100)
		hc, _ := newClient(t)
		st := retryStack(t, hc, 2)
		r, err := http.NewRequest(http.MethodGet, srv.URL, nil)
		require.NoError(t, err)
		resp, err := troupe.Do(ctx, st, r)
		require.ErrorIs(t, err, retry.ErrExhausted)
		assert.Nil(t, resp)
		assert.EqualValues(t, 3, calls.Load())
	})
}

func TestRetryable(t *testing.T) {
	held := func(code int) *http.Response {
		return &http.Response{StatusCode: code, Body: http.NoBody}
	}
	for _, code := range []int{429, 500, 502, 503, 504} {
		assert.True(t, troupehttp.Retryable(held(code), nil), "%d", code)
	}
	for _, code := range []int{200, 201, 301, 400, 401, 403, 404, 409, 422, 501, 505} {
		assert.False(t, troupehttp.Retryable(held(code), nil), "%d", code)
	}
	unheld := &http.Response{StatusCode: 503, Body: io.NopCloser(strings.NewReader("x"))}
	assert.False(t, troupehttp.Retryable(unheld, nil), "an unheld response is never retried")
	assert.True(t, troupehttp.Retryable(nil, errors.New("connection reset")))
	assert.True(t, troupehttp.Retryable(nil, context.DeadlineExceeded))
	assert.False(t, troupehttp.Retryable(nil, context.Canceled), "the caller gave up")

	on := troupehttp.RetryOn(408)
	assert.True(t, on(held(408), nil))
	assert.False(t, on(held(503), nil))
}
