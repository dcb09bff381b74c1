package troupehttp_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/stages"
	"github.com/troupe-go/troupe/stages/adaptive"
	"github.com/troupe-go/troupe/stages/hedge"
	"github.com/troupe-go/troupe/stages/ratelimit"
	"github.com/troupe-go/troupe/troupehttp"
	"github.com/troupe-go/troupe/troupetest"
)

const scriptName = "<script>alert(1)</script>"

// The dashboard's numbers follow the traffic tick by tick: in flight while
// calls are held, accepted a second, latency percentiles of the calls
// finished in the tick, and a breaker's opening with the failures that
// tripped it and the refusals after; the plotted series grow with them.
// spec: PP5
func TestDashboardNumbersFollowTheTraffic(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d, err := troupehttp.NewDashboard()
		require.NoError(t, err)
		b := &dashBackend{lat: 10 * time.Millisecond, gate: make(chan struct{})}
		st := observedStack(t, d, "api", b)
		rec := newSSERecorder()
		cancel, done := openStream(d, rec)
		defer func() { cancel(); <-done }()

		f, _ := rec.next(t)
		assert.Equal(t, 1000.0, f.IntervalMs)
		lim := f.stage(t, "api", "limit")
		assert.Equal(t, 8, lim.Capacity)
		assert.Zero(t, lim.InFlight)
		assert.Nil(t, lim.Accepted, "no rate before a second sample")
		assert.False(t, lim.Unbounded)
		assert.Equal(t, "closed", f.stage(t, "api", "breaker").Breaker)
		assert.True(t, f.stage(t, "api", "breaker").Unbounded, "a breaker has no capacity of its own")

		// Five calls held: in flight, and accepted in this tick.
		var wg sync.WaitGroup
		for range 5 {
			wg.Go(func() { _, _ = troupe.Do(context.Background(), st, 1) })
		}
		synctest.Wait()
		f, _ = rec.next(t)
		require.True(t, f.Stacks[0].Observed)
		lim = f.stage(t, "api", "limit")
		assert.Equal(t, 5, lim.InFlight)
		assert.Equal(t, 5.0, *lim.Accepted)
		assert.Zero(t, *lim.Failed)
		assert.Nil(t, lim.P50, "nothing finished in the tick")
		assert.Equal(t, []int{0, 5}, lim.SeriesInFlight)
		assert.Equal(t, []float64{0, 5}, lim.SeriesAccepted)

		// Released (held for a second), then twenty calls of 10 ms.
		close(b.gate)
		wg.Wait()
		for range 20 {
			_, err := troupe.Do(context.Background(), st, 0)
			require.NoError(t, err)
		}
		f, _ = rec.next(t)
		lim = f.stage(t, "api", "limit")
		assert.Zero(t, lim.InFlight)
		assert.Equal(t, 20.0, *lim.Accepted)
		assert.InEpsilon(t, 10.0, *lim.P50, 1.0/16, "p50 ms")
		assert.InEpsilon(t, 1000.0, *lim.P99, 1.0/16, "p99 ms: the held calls")

		// Three failures trip the breaker; the next four are refused.
		b.failing.Store(true)
		for range 7 {
			_, err := troupe.Do(context.Background(), st, 0)
			require.Error(t, err)
		}
		f, _ = rec.next(t)
		br := f.stage(t, "api", "breaker")
		assert.Equal(t, "open", br.Breaker)
		assert.Equal(t, 3.0, *br.Failed)
		assert.Equal(t, 4.0, *br.Rejected)
		assert.Equal(t, 7.0, *f.stage(t, "api", "limit").Accepted)
		assert.Len(t, br.SeriesInFlight, 4)
	})
}

// A stack built without the dashboard's observer still shows what its
// stats have, and null for the rates that need the observer.
// spec: PP5
func TestDashboardWithoutTheObserverShowsTheStats(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d, err := troupehttp.NewDashboard(troupehttp.DashboardInterval(100*time.Millisecond), troupehttp.DashboardHistory(2))
		require.NoError(t, err)
		b := &dashBackend{gate: make(chan struct{})}
		st, err := stages.Stack[int, int]().Limit(3).Build(troupetest.NewSystem(t), actorsFunc(b))
		require.NoError(t, err)
		defer st.Close(context.Background())
		require.NoError(t, d.Register("plain", st))
		rec := newSSERecorder()
		cancel, done := openStream(d, rec)
		defer func() { cancel(); <-done }()
		rec.next(t)
		var wg sync.WaitGroup
		wg.Go(func() { _, _ = troupe.Do(context.Background(), st, 1) })
		synctest.Wait()
		for range 3 { // the series keeps the last two ticks
			rec.next(t)
		}
		f, _ := rec.next(t)
		assert.False(t, f.Stacks[0].Observed)
		lim := f.stage(t, "plain", "limit")
		assert.Equal(t, 1, lim.InFlight)
		assert.Nil(t, lim.Accepted)
		assert.Nil(t, lim.P99)
		assert.Equal(t, []int{1, 1}, lim.SeriesInFlight)
		close(b.gate)
		wg.Wait()
	})
}

// Names are user strings: the page escapes the stack names it renders, and
// the JSON the page reads has no markup in it (the script sets them as text).
// spec: PP5
func TestDashboardEscapesEveryName(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d, err := troupehttp.NewDashboard()
		require.NoError(t, err)
		b := &dashBackend{}
		st, err := stages.Stack[int, int]().Limit(2).Named(`<img src=x onerror="alert(2)">`).
			Build(troupetest.NewSystem(t), actorsFunc(b))
		require.NoError(t, err)
		defer st.Close(context.Background())
		require.NoError(t, d.Register(scriptName, st))

		page := httptest.NewRecorder()
		d.ServeHTTP(page, httptest.NewRequest(http.MethodGet, "/", nil))
		require.Equal(t, http.StatusOK, page.Code)
		body := page.Body.String()
		assert.Contains(t, body, "&lt;script&gt;alert(1)&lt;/script&gt;")
		assert.NotContains(t, body, scriptName)
		assert.NotContains(t, body, "innerHTML")

		rec := newSSERecorder()
		cancel, done := openStream(d, rec)
		defer func() { cancel(); <-done }()
		f, raw := rec.next(t)
		assert.Equal(t, scriptName, f.Stacks[0].Name)
		assert.Equal(t, `<img src=x onerror="alert(2)">`, f.Stacks[0].Stages[0].Name)
		assert.NotContains(t, string(raw), "<")
		assert.NotContains(t, string(raw), ">")
	})
}

// The page stands alone: nothing loaded from elsewhere, a policy that
// forbids it, and the stream's address relative to the page.
// spec: PP5
func TestDashboardPageIsSelfContained(t *testing.T) {
	d, err := troupehttp.NewDashboard()
	require.NoError(t, err)
	srv := httptest.NewServer(http.StripPrefix("/dash", d))
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/dash/")
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "text/html; charset=utf-8", resp.Header.Get("Content-Type"))
	assert.Contains(t, resp.Header.Get("Content-Security-Policy"), "default-src 'none'")
	page := string(body)
	for _, external := range []string{"http://", "https://", "<link", " src=", "@import", "url("} {
		assert.NotContains(t, page, external)
	}
	assert.Contains(t, page, `new EventSource("events")`)
	assert.Contains(t, page, `el("canvas")`)
}

// The dashboard is read-only and serves two paths: any method but GET and
// HEAD is 405, any other path 404; HEAD has no body.
// spec: PP5
func TestDashboardIsReadOnly(t *testing.T) {
	d, err := troupehttp.NewDashboard()
	require.NoError(t, err)
	for _, m := range []string{http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodOptions} {
		for _, p := range []string{"/", "/events", "/nothing"} {
			w := httptest.NewRecorder()
			d.ServeHTTP(w, httptest.NewRequest(m, p, strings.NewReader("x")))
			assert.Equal(t, http.StatusMethodNotAllowed, w.Code, "%s %s", m, p)
			assert.Equal(t, "GET, HEAD", w.Header().Get("Allow"))
		}
	}
	for _, p := range []string{"/index.html", "/events/", "/events/x", "/../events"} {
		w := httptest.NewRecorder()
		d.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "http://x"+p, nil))
		assert.Equal(t, http.StatusNotFound, w.Code, p)
	}
	for _, p := range []string{"/", "/events"} {
		w := httptest.NewRecorder()
		d.ServeHTTP(w, httptest.NewRequest(http.MethodHead, p, nil))
		assert.Equal(t, http.StatusOK, w.Code, p)
		assert.Zero(t, w.Body.Len(), p)
	}
}

// A stream ends with its request's context, and every stream ends at
// Close, which waits for them; after it a stream is refused.
// spec: PP5
func TestDashboardStreamsEndWithTheirRequestAndAtClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d, err := troupehttp.NewDashboard()
		require.NoError(t, err)
		one, two, three := newSSERecorder(), newSSERecorder(), newSSERecorder()
		cancel1, done1 := openStream(d, one)
		cancel2, done2 := openStream(d, two)
		defer cancel2()
		cancel3, done3 := openStream(d, three)
		defer cancel3()
		one.next(t)
		two.next(t)
		three.next(t)
		cancel1()
		<-done1

		// A Close whose context ends first says so, and ends the streams
		// all the same.
		expired, stop := context.WithCancel(context.Background())
		stop()
		require.NoError(t, d.Close(context.Background()))
		<-done2
		<-done3
		require.NoError(t, d.Close(expired), "closed already, no stream left")

		w := httptest.NewRecorder()
		d.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/events", nil))
		assert.Equal(t, http.StatusServiceUnavailable, w.Code)
	})
}

// Close with a stream that cannot end (its handler is blocked writing)
// returns the context's error.
// spec: PP5
func TestDashboardCloseHonoursItsContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d, err := troupehttp.NewDashboard()
		require.NoError(t, err)
		rec := newSSERecorder()
		rec.events = make(chan []byte) // nobody reads: the first flush blocks
		cancel, done := openStream(d, rec)
		defer cancel()
		synctest.Wait()
		ctx, stop := context.WithTimeout(context.Background(), time.Second)
		defer stop()
		err = d.Close(ctx)
		require.ErrorIs(t, err, context.DeadlineExceeded)
		<-rec.events
		<-done
		require.NoError(t, d.Close(context.Background()))
	})
}

// Bad options and registrations are configuration errors.
// spec: PP5
func TestDashboardRefusesABadConfiguration(t *testing.T) {
	for _, o := range []troupehttp.DashboardOption{troupehttp.DashboardInterval(0), troupehttp.DashboardHistory(1), nil} {
		_, err := troupehttp.NewDashboard(o)
		require.ErrorIs(t, err, troupe.ErrBadConfig)
	}
	d, err := troupehttp.NewDashboard()
	require.NoError(t, err)
	st := staticStages{{Name: "x"}}
	require.NoError(t, d.Register("a", st))
	for _, c := range []struct {
		name string
		src  troupehttp.StatsSource
	}{{"a", st}, {"", st}, {"b", nil}} {
		err := d.Register(c.name, c.src)
		var ce *troupe.ConfigError
		require.True(t, errors.As(err, &ce), "%q: %v", c.name, err)
		require.ErrorIs(t, err, troupe.ErrBadConfig)
	}
}

// Over a real server, the stream is text/event-stream, one event a tick.
// spec: PP5
func TestDashboardStreamsOverHTTP(t *testing.T) {
	d, err := troupehttp.NewDashboard(troupehttp.DashboardInterval(10 * time.Millisecond))
	require.NoError(t, err)
	require.NoError(t, d.Register("static", staticStages{{Name: "s", Capacity: 4, Used: 3}}))
	srv := httptest.NewServer(d)
	defer srv.Close()
	defer func() { require.NoError(t, d.Close(context.Background())) }()
	resp, err := http.Get(srv.URL + "/events")
	require.NoError(t, err)
	defer resp.Body.Close()
	assert.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	sc := bufio.NewScanner(resp.Body)
	events := 0
	for events < 3 && sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			assert.Contains(t, data, `"name":"s","capacity":4,"inFlight":3`)
			events++
		}
	}
	require.NoError(t, sc.Err())
	assert.Equal(t, 3, events)
}

// staticStages is a StatsSource whose stages never change.
type staticStages []troupe.Stats

func (s staticStages) Stages() []troupe.Stats { return s }

// Each kind of stage shows its own state: an adaptive limit's limit, a rate
// limit's state, a retry's retries a second, a hedge's hedges a second.
// spec: PP5
func TestDashboardShowsEachStagesOwnState(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d, err := troupehttp.NewDashboard()
		require.NoError(t, err)
		sys := troupetest.NewSystem(t)
		var calls atomic.Int64
		flaky := actors.Func(func(ctx context.Context, r int) (int, error) {
			if calls.Add(1)%2 == 1 { // every first attempt fails
				return 0, errDown
			}
			return r, nil
		})
		kinds, err := stages.Stack[int, int]().Observe(d.Observer(), "kinds").
			Adaptive(adaptive.Limits(2, 6), adaptive.Initial(5)).
			Retry(1, fixed(time.Millisecond)).
			RateLimit(ratelimit.Rate{Num: 100, Per: time.Second}).
			Build(sys, flaky)
		require.NoError(t, err)
		defer kinds.Close(context.Background())
		slow := actors.Func(func(ctx context.Context, r int) (int, error) {
			time.Sleep(50 * time.Millisecond)
			return r, nil
		})
		hedged, err := stages.Stack[int, int]().
			Hedge(hedge.Delay(10*time.Millisecond), hedge.MaxHedges(1), hedge.NoBudget()).
			Build(sys, slow)
		require.NoError(t, err)
		defer hedged.Close(context.Background())
		require.NoError(t, errors.Join(d.Register("kinds", kinds), d.Register("hedged", hedged)))

		rec := newSSERecorder()
		cancel, done := openStream(d, rec)
		defer func() { cancel(); <-done }()
		rec.next(t)
		for range 4 {
			_, err := troupe.Do(context.Background(), kinds, 0)
			require.NoError(t, err)
			_, err = troupe.Do(context.Background(), hedged, 0)
			require.NoError(t, err)
		}
		f, _ := rec.next(t)
		ad, ok := kinds.Stats("adaptive")
		require.True(t, ok)
		assert.Equal(t, ad.Detail.(adaptive.Snapshot).Limit, *f.stage(t, "kinds", "adaptive").Limit, "the limit now (probing: the min)")
		assert.Equal(t, "ready", f.stage(t, "kinds", "ratelimit").RateLimit)
		assert.Equal(t, 4.0, *f.stage(t, "kinds", "retry").Retries)
		assert.Nil(t, f.stage(t, "kinds", "retry").Hedges, "not a hedge")
		assert.Nil(t, f.stage(t, "kinds", "retry").Limit, "not an adaptive limit")
		assert.Equal(t, 4.0, *f.stage(t, "hedged", "hedge").Hedges, "from the stats: no observer needed")
		assert.Nil(t, f.stage(t, "hedged", "hedge").Retries)
	})
}
