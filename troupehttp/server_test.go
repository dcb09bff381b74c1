package troupehttp_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/stages"
	"github.com/troupe-go/troupe/stages/breaker"
	"github.com/troupe-go/troupe/stages/loadshed"
	"github.com/troupe-go/troupe/stages/ratelimit"
	"github.com/troupe-go/troupe/troupehttp"
	"github.com/troupe-go/troupe/troupetest"
)

// protected is the handler a server stack protects: /block waits for
// release (or its context), /fail answers 500, /abort aborts the
// response, /panic panics, anything else answers 200 "ok". ran counts the
// requests that reached it.
type protected struct {
	release chan struct{}
	ran     atomic.Int64
	mux     *http.ServeMux
}

func newProtected() *protected {
	b := &protected{release: make(chan struct{}), mux: http.NewServeMux()}
	b.mux.HandleFunc("/block", func(w http.ResponseWriter, r *http.Request) {
		b.ran.Add(1)
		select {
		case <-b.release:
			_, _ = io.WriteString(w, "released")
		case <-r.Context().Done():
		}
	})
	b.mux.HandleFunc("/fail", func(w http.ResponseWriter, r *http.Request) {
		b.ran.Add(1)
		http.Error(w, "backend down", http.StatusInternalServerError)
	})
	b.mux.HandleFunc("/abort", func(http.ResponseWriter, *http.Request) {
		b.ran.Add(1)
		panic(http.ErrAbortHandler)
	})
	b.mux.HandleFunc("/panic", func(http.ResponseWriter, *http.Request) {
		b.ran.Add(1)
		panic("a bug in the handler")
	})
	b.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		b.ran.Add(1)
		_, _ = io.WriteString(w, "ok")
	})
	return b
}

// serveStack builds stack over b's handler and serves it on loopback,
// behind troupehttp.Handler with opts.
func serveStack(t *testing.T, b *protected, stack stages.Builder[*troupehttp.ServerCall, int], opts ...troupehttp.HandlerOption) (*httptest.Server, *troupe.Stack[*troupehttp.ServerCall, int]) {
	t.Helper()
	st, err := stack.Build(troupetest.NewSystem(t), troupehttp.Serve(b.mux))
	require.NoError(t, err)
	srv := httptest.NewServer(troupehttp.Handler(st, opts...))
	t.Cleanup(srv.Close)
	return srv, st
}

// got is one response as the client saw it.
type got struct {
	status     int
	retryAfter string
	body       string
	err        error
}

// fetchPath requests path with the header pairs kv, and ctx.
func fetchPath(ctx context.Context, srv *httptest.Server, path string, kv ...string) got {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+path, nil)
	if err != nil {
		return got{err: err}
	}
	for i := 0; i+1 < len(kv); i += 2 {
		req.Header.Set(kv[i], kv[i+1])
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		return got{err: err}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return got{status: resp.StatusCode, retryAfter: resp.Header.Get("Retry-After"), body: string(body), err: err}
}

// goFetch runs get on a goroutine of its own.
func goFetch(ctx context.Context, srv *httptest.Server, path string, kv ...string) <-chan got {
	out := make(chan got, 1)
	go func() { out <- fetchPath(ctx, srv, path, kv...) }()
	return out
}

// untilHolds polls cond (a stage's counts, which change on other goroutines)
// until it holds.
func untilHolds(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("never: %s", what)
		}
		time.Sleep(time.Millisecond) // polls a condition; no order depends on the sleep
	}
}

func usedIn(st *troupe.Stack[*troupehttp.ServerCall, int], stage string) int {
	s, _ := st.Stats(stage)
	return s.Used
}

func waitingIn(st *troupe.Stack[*troupehttp.ServerCall, int], stage string) int {
	s, _ := st.Stats(stage)
	return s.Waiting
}

// A LoadShed in front of a Limit: one request runs, one waits for it, the
// next is shed with 503 and a Retry-After before the handler sees it; the
// two admitted get the handler's own answers.
//
// spec: PP4
func TestAServerStackShedsWith503AndLetsTheAdmittedThrough(t *testing.T) {
	b := newProtected()
	srv, st := serveStack(t, b, stages.Stack[*troupehttp.ServerCall, int]().LoadShed(loadshed.Capacity(1)).Limit(1))
	ctx := context.Background()
	first := goFetch(ctx, srv, "/block")
	untilHolds(t, "the first request runs", func() bool { return b.ran.Load() == 1 })
	second := goFetch(ctx, srv, "/block")
	untilHolds(t, "the second request waits for the limit", func() bool { return usedIn(st, "loadshed") == 1 })

	shed := fetchPath(ctx, srv, "/")
	require.NoError(t, shed.err)
	assert.Equal(t, http.StatusServiceUnavailable, shed.status)
	assert.Equal(t, "1", shed.retryAfter, "troupehttp.DefaultRetryAfter, in seconds")
	assert.Equal(t, int64(1), b.ran.Load(), "the shed request never reached the handler")

	close(b.release)
	for _, c := range []<-chan got{first, second} {
		g := <-c
		require.NoError(t, g.err)
		assert.Equal(t, http.StatusOK, g.status)
		assert.Equal(t, "released", g.body)
	}
}

// A quota of one's own refuses with troupehttp.RateLimited: 429 with its
// Retry-After, and the handler never runs.
//
// spec: PP4
func TestARequestAQuotaRefusesGets429WithItsRetryAfter(t *testing.T) {
	b := newProtected()
	quota := func(c *troupehttp.ServerCall) (*troupehttp.ServerCall, error) {
		if c.Request().Header.Get("X-Client") == "greedy" {
			return nil, troupehttp.RateLimited(3*time.Second, errors.New("greedy's quota is spent"))
		}
		return c, nil
	}
	srv, _ := serveStack(t, b, stages.Stack[*troupehttp.ServerCall, int]().Filter(quota).Limit(4))
	g := fetchPath(context.Background(), srv, "/", "X-Client", "greedy")
	require.NoError(t, g.err)
	assert.Equal(t, http.StatusTooManyRequests, g.status)
	assert.Equal(t, "3", g.retryAfter)
	assert.Equal(t, int64(0), b.ran.Load())

	g = fetchPath(context.Background(), srv, "/", "X-Client", "modest")
	require.NoError(t, g.err)
	assert.Equal(t, http.StatusOK, g.status)
	assert.Equal(t, "ok", g.body)
}

// A rate limit in the server's stack that refuses a request (no unit
// within its MaxWait) has it answered 429 with the wait until its next
// unit, before the handler sees it.
//
// spec: PP4, PP2
func TestARequestTheRateLimitRefusesGets429WithTheWaitForItsTurn(t *testing.T) {
	b := newProtected()
	srv, _ := serveStack(t, b, stages.Stack[*troupehttp.ServerCall, int]().
		RateLimit(ratelimit.Rate{Num: 1, Per: time.Minute}, ratelimit.MaxWait(time.Second)).Limit(4))
	g := fetchPath(context.Background(), srv, "/")
	require.NoError(t, g.err)
	assert.Equal(t, http.StatusOK, g.status)

	g = fetchPath(context.Background(), srv, "/")
	require.NoError(t, g.err)
	assert.Equal(t, http.StatusTooManyRequests, g.status)
	assert.Contains(t, []string{"59", "60"}, g.retryAfter, "the wait for the next window")
	assert.Equal(t, int64(1), b.ran.Load(), "the refused request never reached the handler")
}

// The handler's 5xx answers are the breaker's failures: the client gets
// the handler's own 500, and once the breaker is open the next request is
// answered 503 with the time until it lets requests through again.
//
// spec: PP4
func TestAnOpenBreakerInFrontOfAHandlerAnswers503(t *testing.T) {
	b := newProtected()
	srv, _ := serveStack(t, b, stages.Stack[*troupehttp.ServerCall, int]().
		Breaker(breaker.MinCalls(1), breaker.CountWindow(1), breaker.OpenDelay(30*time.Second)).Limit(4))
	g := fetchPath(context.Background(), srv, "/fail")
	require.NoError(t, g.err)
	assert.Equal(t, http.StatusInternalServerError, g.status)
	assert.Equal(t, "backend down\n", g.body, "the handler's response, not written over")

	g = fetchPath(context.Background(), srv, "/")
	require.NoError(t, g.err)
	assert.Equal(t, http.StatusServiceUnavailable, g.status)
	assert.Contains(t, []string{"29", "30"}, g.retryAfter, "the open delay left")
	assert.Equal(t, int64(1), b.ran.Load(), "the open breaker kept the second request from the handler")
}

// A handler that gave up on its request once the client went away, writing
// nothing, is not a success to the stack: a breaker does not count it
// (the caller's own cancellation), so one failure after it does not fill
// a window of two and open the breaker.
//
// spec: PP4
func TestAHandlerThatGaveUpOnAGoneClientIsNotASuccess(t *testing.T) {
	b := newProtected()
	srv, st := serveStack(t, b, stages.Stack[*troupehttp.ServerCall, int]().
		Breaker(breaker.MinCalls(2), breaker.CountWindow(2), breaker.OpenDelay(30*time.Second)).Limit(4))
	ctx, cancel := context.WithCancel(context.Background())
	gone := goFetch(ctx, srv, "/block") // returns on its context's end, writing nothing
	untilHolds(t, "the handler runs", func() bool { return b.ran.Load() == 1 })
	cancel()
	assert.ErrorIs(t, (<-gone).err, context.Canceled)
	untilHolds(t, "the handler returned", func() bool { return usedIn(st, "limit") == 0 })

	g := fetchPath(context.Background(), srv, "/fail")
	require.NoError(t, g.err)
	assert.Equal(t, http.StatusInternalServerError, g.status)
	g = fetchPath(context.Background(), srv, "/")
	require.NoError(t, g.err)
	assert.Equal(t, http.StatusOK, g.status, "one failure in the window, not one of two: the breaker stays closed")
}

// A client that goes away while its request waits for admission ends the
// wait: the stage's line is empty again, and the handler never runs for it.
//
// spec: PP4
func TestAClientThatGoesAwayEndsItsWaitForAdmission(t *testing.T) {
	b := newProtected()
	srv, st := serveStack(t, b, stages.Stack[*troupehttp.ServerCall, int]().Limit(1))
	first := goFetch(context.Background(), srv, "/block")
	untilHolds(t, "the first request runs", func() bool { return b.ran.Load() == 1 })
	ctx, cancel := context.WithCancel(context.Background())
	second := goFetch(ctx, srv, "/")
	untilHolds(t, "the second request waits for the limit", func() bool { return waitingIn(st, "limit") == 1 })
	cancel()
	assert.ErrorIs(t, (<-second).err, context.Canceled)
	untilHolds(t, "the server side gave up its wait", func() bool { return waitingIn(st, "limit") == 0 })
	close(b.release)
	assert.Equal(t, http.StatusOK, (<-first).status)
	assert.Equal(t, int64(1), b.ran.Load(), "the handler never ran for the client that went away")
}

// Priorities come from a function of the request: with a slot of the
// LoadShed kept for High, a Normal request is shed where a High one still
// waits its turn.
//
// spec: PP4
func TestPrioritiesComeFromAFunctionOfTheRequest(t *testing.T) {
	b := newProtected()
	prio := func(r *http.Request) loadshed.Priority {
		if r.Header.Get("X-Priority") == "high" {
			return loadshed.High
		}
		return loadshed.Normal
	}
	srv, st := serveStack(t, b, stages.Stack[*troupehttp.ServerCall, int]().
		LoadShed(loadshed.Capacity(2), loadshed.KeepFor(loadshed.High, 1)).Limit(1), troupehttp.WithPriority(prio))
	ctx := context.Background()
	first := goFetch(ctx, srv, "/block")
	untilHolds(t, "the first request runs", func() bool { return b.ran.Load() == 1 })
	second := goFetch(ctx, srv, "/block")
	untilHolds(t, "a Normal request waits", func() bool { return usedIn(st, "loadshed") == 1 })

	normal := fetchPath(ctx, srv, "/")
	require.NoError(t, normal.err)
	assert.Equal(t, http.StatusServiceUnavailable, normal.status, "only the slot kept for High is left")
	high := goFetch(ctx, srv, "/", "X-Priority", "high")
	untilHolds(t, "the High request waits in the kept slot", func() bool { return usedIn(st, "loadshed") == 2 })

	close(b.release)
	for _, c := range []<-chan got{first, second, high} {
		g := <-c
		require.NoError(t, g.err)
		assert.Equal(t, http.StatusOK, g.status)
	}
	assert.Equal(t, int64(3), b.ran.Load())
}

// net/http's own way to abort a response still works behind a stack (the
// client sees the connection cut, not a response), and a handler's panic
// that wrote nothing is answered 500.
//
// spec: PP4
func TestAHandlerBehindAStackAbortsAndPanicsAsNetHTTPExpects(t *testing.T) {
	b := newProtected()
	srv, st := serveStack(t, b, stages.Stack[*troupehttp.ServerCall, int]().Limit(2))
	g := fetchPath(context.Background(), srv, "/abort")
	assert.Error(t, g.err, "http.ErrAbortHandler cuts the response")
	g = fetchPath(context.Background(), srv, "/panic")
	require.NoError(t, g.err)
	assert.Equal(t, http.StatusInternalServerError, g.status)
	untilHolds(t, "both slots are free", func() bool { return usedIn(st, "limit") == 0 })
	g = fetchPath(context.Background(), srv, "/")
	require.NoError(t, g.err)
	assert.Equal(t, "ok", g.body)
}

// A misconfigured Handler answers every request 500 with an error matching
// troupe.ErrBadConfig in its text, rather than panicking.
//
// spec: PP4, EG6
func TestAMisconfiguredHandlerAnswers500(t *testing.T) {
	b := newProtected()
	st, err := stages.Stack[*troupehttp.ServerCall, int]().Limit(1).Build(troupetest.NewSystem(t), troupehttp.Serve(b.mux))
	require.NoError(t, err)
	for name, h := range map[string]http.Handler{
		"nil service":  troupehttp.Handler(nil),
		"nil option":   troupehttp.Handler(st, nil),
		"nil priority": troupehttp.Handler(st, troupehttp.WithPriority(nil)),
	} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
		assert.Equal(t, http.StatusInternalServerError, rec.Code, name)
		assert.Contains(t, rec.Body.String(), "troupe: troupehttp.Handler: bad ", name)
	}
	assert.Equal(t, int64(0), b.ran.Load())
}

// A Timeout in a server stack bounds the handler: its context ends at the
// deadline, and a handler that wrote nothing by then is answered 504.
//
// spec: PP4
func TestAHandlerThatOutlivesTheStacksTimeoutIsAnswered504(t *testing.T) {
	b := newProtected()
	srv, _ := serveStack(t, b, stages.Stack[*troupehttp.ServerCall, int]().Timeout(50*time.Millisecond).Limit(2))
	g := fetchPath(context.Background(), srv, "/block") // waits for its context
	require.NoError(t, g.err)
	assert.Equal(t, http.StatusGatewayTimeout, g.status)
	assert.Equal(t, int64(1), b.ran.Load())
}
