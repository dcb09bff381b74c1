package troupehttp_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/stages/limit"
	"github.com/troupe-go/troupe/stages/retry"
	"github.com/troupe-go/troupe/stages/timeout"
	"github.com/troupe-go/troupe/troupehttp"
	"github.com/troupe-go/troupe/troupetest"
)

// fullStack is limit(n) -> timeout(d) -> retry(RetryPolicy(3)) -> Client(hc).
func fullStack(t *testing.T, hc *http.Client, n int, d time.Duration) *troupe.Stack[req, res] {
	t.Helper()
	sys := troupetest.NewSystem(t)
	st, err := troupe.NewBuilder[req, res]().
		Layer(limit.Layer[req, res](n)).
		Layer(timeout.Layer[req, res](d)).
		Layer(retry.Layer[req, res](troupehttp.RetryPolicy(3, nil))).
		Build(sys, troupehttp.Client(hc))
	require.NoError(t, err)
	closeStack(t, st)
	return st
}

// A whole stack inside an http.Client: the POST's body crosses both
// clients and is resent intact on the retry (it carries an
// Idempotency-Key); the caller reads the 200.
func TestTransport_StackInsideAnHTTPClient(t *testing.T) {
	ctx := testCtx(t)
	srv := newScripted(t, 503, 200)
	inner, cnt := newClient(t)
	hc := &http.Client{Transport: troupehttp.Transport(fullStack(t, inner, 5, 10*time.Second))}
	r, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, strings.NewReader("hello"))
	require.NoError(t, err)
	r.Header.Set("Idempotency-Key", "k1")
	resp, err := hc.Do(r)
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "200 from attempt 2", readBody(t, resp))
	assert.Equal(t, []string{"hello", "hello"}, srv.received())
	assert.EqualValues(t, 2, cnt.closed.Load(), "the 503's body and the caller's")
}

// The timeout stage's deadline ends the call, and the http.Client's error
// matches timeout.ErrTimeout through its *url.Error. The timeout is outside
// the retry stage, so it bounds the whole session: the attempt it cut short
// is not retried (its error matches ErrCallEnded), and the stack drains on
// Close. NOTE: a retry here would be a regression: the runtime hands the
// new attempt to the caller, who already returned with the timeout error,
// so nobody runs it, the session never ends and Close (closeStack) fails.
func TestTransport_TimeoutMatchesErrTimeout(t *testing.T) {
	ctx := testCtx(t)
	srv, arrived, calls := blocking(t, 100)
	inner, _ := newClient(t)
	hc := &http.Client{Transport: troupehttp.Transport(fullStack(t, inner, 5, 50*time.Millisecond))}
	r, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
	require.NoError(t, err)
	resp, err := hc.Do(r)
	require.Error(t, err)
	assert.Nil(t, resp)
	assert.ErrorIs(t, err, timeout.ErrTimeout)
	var ue *url.Error
	require.ErrorAs(t, err, &ue)
	var te *timeout.Error
	require.ErrorAs(t, err, &te)
	assert.Equal(t, 50*time.Millisecond, te.After)
	select {
	case <-arrived:
	default:
		t.Fatal("the request never reached the server")
	}
	assert.EqualValues(t, 1, calls.Load(), "the expired session was not retried")
}

// 50 concurrent requests through the Transport over limit(5) (then
// timeout, retry, client): the server never has more than 5 at once. The
// server holds the requests until the test has seen where all 50 are:
// exactly 5 at the server and 45 waiting at the limit, a state that does
// not change by itself, so the count is exact (a limit of 6 shows 6). Then
// all go, and the server's peak over the whole run must stay 5.
func TestTransport_LimitOf5Holds50ConcurrentRequests(t *testing.T) {
	const total, n = 50, 5
	ctx := testCtx(t)
	var (
		mu                      sync.Mutex
		arrived, inflight, peak int // guarded by mu
	)
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		arrived++
		inflight++
		peak = max(peak, inflight)
		mu.Unlock()
		select {
		case <-release:
		case <-r.Context().Done():
		}
		mu.Lock()
		inflight-- // before the response is written: the limit frees its permit only after
		mu.Unlock()
		io.WriteString(w, "ok")
	}))
	t.Cleanup(srv.Close)
	releaseAll := sync.OnceFunc(func() { close(release) })
	t.Cleanup(releaseAll) // first: srv.Close waits for the handlers
	inner, _ := newClient(t)
	sys := troupetest.NewSystem(t)
	below, err := troupe.NewBuilder[req, res]().
		Layer(timeout.Layer[req, res](10*time.Second)).
		Layer(retry.Layer[req, res](troupehttp.RetryPolicy(3, nil))).
		Build(sys, troupehttp.Client(inner))
	require.NoError(t, err)
	closeStack(t, below)
	lim, err := limit.New(sys, troupe.Service[req, res](below), n)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, lim.Close(context.Background())) })
	hc := &http.Client{Transport: troupehttp.Transport(lim)}

	var wg sync.WaitGroup
	errs := make(chan error, total)
	for range total {
		wg.Go(func() {
			r, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
			if err == nil {
				var resp *http.Response
				if resp, err = hc.Do(r); err == nil {
					_, err = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
			}
			errs <- err
		})
	}
	// Wait until every request is either at the server or waiting at the
	// limit. There is no event to wait on, so poll; the condition, not the
	// time, decides.
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for {
		mu.Lock()
		at := arrived
		mu.Unlock()
		if at+lim.Stats().Waiting == total {
			assert.Equal(t, n, at, "requests at the server while the rest wait at the limit")
			break
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			t.Fatalf("requests never settled: %d at the server, %+v at the limit", at, lim.Stats())
		}
	}
	releaseAll()
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, total, arrived)
	assert.Equal(t, n, peak, "the server never had more than %d requests at once", n)
}

// A closed stack's error keeps troupe.ErrClosed through the http.Client's
// *url.Error, and RoundTrip closes the request's body on its error.
func TestTransport_ErrorsKeepSentinelsAndCloseTheRequestBody(t *testing.T) {
	ctx := testCtx(t)
	srv := newScripted(t, 200)
	inner, _ := newClient(t)
	st := fullStack(t, inner, 5, time.Second)
	require.NoError(t, st.Close(ctx))
	tr := troupehttp.Transport(st)

	body := &closeRecorder{Reader: strings.NewReader("x")}
	r, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, body)
	require.NoError(t, err)
	resp, err := tr.RoundTrip(r)
	assert.Nil(t, resp)
	assert.ErrorIs(t, err, troupe.ErrClosed)
	assert.True(t, body.closed.Load(), "RoundTrip closed the body on its error")

	_, err = (&http.Client{Transport: tr}).Get(srv.URL)
	var ue *url.Error
	require.ErrorAs(t, err, &ue)
	assert.ErrorIs(t, err, troupe.ErrClosed)
	assert.Empty(t, srv.received())
}

// A service that breaks the RoundTripper contract is made to keep it:
// neither response nor error gives ErrNilResponse; both gives the error
// alone, with the response's body closed.
func TestTransport_ExactlyOneOfResponseAndError(t *testing.T) {
	ctx := testCtx(t)
	r, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://example.invalid/", nil)
	require.NoError(t, err)

	neither := actors.Func(func(context.Context, req) (res, error) { return nil, nil })
	resp, err := troupehttp.Transport(neither).RoundTrip(r)
	assert.Nil(t, resp)
	assert.ErrorIs(t, err, troupehttp.ErrNilResponse)

	rb := &closeRecorder{Reader: strings.NewReader("x")}
	boom := errors.New("boom")
	both := actors.Func(func(context.Context, req) (res, error) {
		return &http.Response{StatusCode: 200, Body: rb}, boom
	})
	resp, err = troupehttp.Transport(both).RoundTrip(r)
	assert.Nil(t, resp)
	assert.ErrorIs(t, err, boom)
	assert.True(t, rb.closed.Load(), "the response's body was closed")

	resp, err = troupehttp.Transport(nil).RoundTrip(r)
	assert.Nil(t, resp)
	assert.ErrorIs(t, err, troupehttp.ErrNilService)
}

// RoundTrip does not modify the request, though the stages below send it
// with a derived context (the timeout's) and copies (the retry's).
func TestTransport_DoesNotModifyTheRequest(t *testing.T) {
	ctx := testCtx(t)
	srv := newScripted(t, 503, 200)
	inner, _ := newClient(t)
	tr := troupehttp.Transport(fullStack(t, inner, 5, 10*time.Second))
	r, err := http.NewRequestWithContext(ctx, http.MethodPut, srv.URL+"/a?b=c", bytes.NewReader([]byte("body")))
	require.NoError(t, err)
	r.Header.Set("X-Test", "1")
	r.Header.Set("Idempotency-Key", "k1") // a PUT is retried only with one
	before := *r
	header := r.Header.Clone()
	u := *r.URL
	resp, err := tr.RoundTrip(r)
	require.NoError(t, err)
	readBody(t, resp)
	assert.Same(t, ctx, r.Context())
	assert.Equal(t, header, r.Header)
	assert.Equal(t, u, *r.URL)
	assert.Equal(t, before.Body, r.Body)
	assert.Equal(t, before.ContentLength, r.ContentLength)
	assert.Equal(t, []string{"body", "body"}, srv.received())
}

// A Timeout inside the retry stage gives each attempt its own deadline, and
// its error is retried: the first attempt hangs, the second answers.
func TestTransport_TimeoutInsideRetryIsRetried(t *testing.T) {
	ctx := testCtx(t)
	srv, _, calls := blocking(t, 1)
	inner, _ := newClient(t)
	sys := troupetest.NewSystem(t)
	st, err := troupe.NewBuilder[req, res]().
		Layer(retry.Layer[req, res](troupehttp.RetryPolicy(3, nil))).
		Layer(timeout.Layer[req, res](50*time.Millisecond)).
		Build(sys, troupehttp.Client(inner))
	require.NoError(t, err)
	closeStack(t, st)
	hc := &http.Client{Transport: troupehttp.Transport(st)}
	r, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
	require.NoError(t, err)
	resp, err := hc.Do(r)
	require.NoError(t, err)
	assert.Equal(t, "ok", readBody(t, resp))
	assert.EqualValues(t, 2, calls.Load())
}

// RoundTrip waits for the stack's readiness with the request's context: a
// request that finds limit(1) taken gives up when its context ends, and
// never reaches the server.
func TestTransport_RequestContextBoundsTheWait(t *testing.T) {
	srv, arrived, calls := blocking(t, 1)
	inner, _ := newClient(t)
	hc := &http.Client{Transport: troupehttp.Transport(fullStack(t, inner, 1, 10*time.Second))}

	first, cancelFirst := context.WithCancel(testCtx(t))
	defer cancelFirst()
	done := make(chan error, 1)
	go func() {
		r, _ := http.NewRequestWithContext(first, http.MethodGet, srv.URL, nil)
		_, err := hc.Do(r)
		done <- err
	}()
	<-arrived // the first request holds the limit's only permit

	second, cancel := context.WithTimeout(testCtx(t), 50*time.Millisecond)
	defer cancel()
	r, err := http.NewRequestWithContext(second, http.MethodGet, srv.URL, nil)
	require.NoError(t, err)
	_, err = hc.Do(r)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.EqualValues(t, 1, calls.Load(), "the second request waited at the limit")

	cancelFirst()
	assert.ErrorIs(t, <-done, context.Canceled)
}
