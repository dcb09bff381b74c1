package troupehttp_test

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/backoff"
	"github.com/troupe-go/troupe/stages"
	"github.com/troupe-go/troupe/stages/balance"
	"github.com/troupe-go/troupe/stages/breaker"
	"github.com/troupe-go/troupe/supervisor"
	"github.com/troupe-go/troupe/troupehttp"
	"github.com/troupe-go/troupe/troupetest"
)

// replica is a loopback server standing for one replica of an API: by
// default it answers every request with its name, the request's path and
// its body; it counts the requests it got.
type replica struct {
	*httptest.Server
	name string
	hits atomic.Int64
}

// newReplica starts a replica; h, when not nil, answers instead of the
// default.
func newReplica(t *testing.T, name string, h http.HandlerFunc) *replica {
	t.Helper()
	rp := &replica{name: name}
	rp.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rp.hits.Add(1)
		if h != nil {
			h(w, r)
			return
		}
		b, _ := io.ReadAll(r.Body)
		fmt.Fprintf(w, "%s: %s %s", name, r.URL.Path, b)
	}))
	t.Cleanup(rp.Close)
	return rp
}

// host is the replica's host:port, as a request's URL names it.
func (rp *replica) host() string {
	u, _ := url.Parse(rp.URL)
	return u.Host
}

// downReplica returns the base URL of a replica that is down: nothing
// listens on its port, so each attempt fails to dial.
func downReplica(t *testing.T) string {
	srv := httptest.NewServer(http.NotFoundHandler())
	srv.Close()
	return srv.URL
}

// attempt is one request a leaf sent: the call it belongs to (X-Call),
// where it went and whether it failed.
type attempt struct {
	call, host string
	failed     bool
}

// attempts is an http.RoundTripper that records every request it sends
// before handing it to base.
type attempts struct {
	base http.RoundTripper

	mu  sync.Mutex
	all []attempt // guarded by mu
}

func (a *attempts) RoundTrip(r *http.Request) (*http.Response, error) {
	res, err := a.base.RoundTrip(r)
	a.mu.Lock()
	a.all = append(a.all, attempt{r.Header.Get("X-Call"), r.URL.Host, err != nil})
	a.mu.Unlock()
	return res, err
}

// byCall returns the attempts of each call, in the order they were sent.
func (a *attempts) byCall() map[string][]attempt {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := map[string][]attempt{}
	for _, at := range a.all {
		out[at.call] = append(out[at.call], at)
	}
	return out
}

// replicaSet is a balancer whose endpoints are base URLs, each a
// supervised pipeline of the stack endpoint() over Send(rt,
// BaseURL(base)), inserted and removed through a discovery channel, and
// an http.Client whose Transport is a Retry outside the balancer.
type replicaSet struct {
	bal    *balance.Balancer[string, req, res]
	ch     chan balance.Change[string, req, res]
	build  func(string) (troupe.Service[req, res], error)
	stack  *troupe.Stack[req, res] // the Retry outside the balancer
	client *http.Client            // over stack's Transport
	rt     *attempts
}

// retries is the Retry outside the balancer of a replicaSet: at most 3
// retries, 1 to 5 ms apart.
var retries = func() troupe.Layer[req, res] {
	bo, _ := backoff.New(time.Millisecond, 5*time.Millisecond)
	return troupehttp.Retry(3, bo)
}()

func newReplicaSet(t *testing.T, endpoint func() stages.Builder[req, res], opts ...balance.Option[res]) *replicaSet {
	t.Helper()
	return newReplicaSetRetrying(t, retries, endpoint, opts...)
}

// newReplicaSetRetrying is newReplicaSet with retry as the Retry outside
// the balancer.
func newReplicaSetRetrying(t *testing.T, retry troupe.Layer[req, res], endpoint func() stages.Builder[req, res], opts ...balance.Option[res]) *replicaSet {
	t.Helper()
	sys := troupetest.NewSystem(t)
	hc, _ := newClient(t)
	s := &replicaSet{ch: make(chan balance.Change[string, req, res]), rt: &attempts{base: hc.Transport}}
	s.build = balance.Pipelines(sys, func(base string) supervisor.Build[req, res] {
		return func(h troupe.Host) (troupe.Service[req, res], error) {
			return endpoint().Build(h, troupehttp.Send(s.rt, troupehttp.BaseURL(base)))
		}
	})
	bal, err := balance.New(balance.Channel(s.ch), opts...)
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		require.NoError(t, bal.Close(ctx))
	})
	s.bal = bal
	outer, err := stages.Stack[req, res]().Layer(retry).Build(sys, bal)
	require.NoError(t, err)
	closeStack(t, outer)
	s.stack = outer
	s.client = &http.Client{Transport: troupehttp.Transport(outer)}
	return s
}

// insert adds an endpoint for each base URL, made by the set's build and
// owned by the balancer.
func (s *replicaSet) insert(t *testing.T, bases ...string) {
	t.Helper()
	for _, base := range bases {
		svc, err := s.build(base)
		require.NoError(t, err)
		s.ch <- balance.Change[string, req, res]{Op: balance.Insert, Key: base, Service: svc, Owned: true}
	}
	s.sync()
}

// remove removes base's endpoint; once it returns, no call picks it.
func (s *replicaSet) remove(base string) {
	s.ch <- balance.Change[string, req, res]{Op: balance.Remove, Key: base}
	s.sync()
}

// sync returns once the changes sent so far are applied: the source
// applies its changes in order, taking the next only once the last is
// applied, so once this one is taken the others are in.
func (s *replicaSet) sync() {
	s.ch <- balance.Change[string, req, res]{Op: balance.Remove, Key: "none"}
}

// get sends GET http://api/items/<call>, marked with the call, and
// returns the status and body.
func (s *replicaSet) get(t *testing.T, call string) (int, string) {
	t.Helper()
	return s.send(t, http.MethodGet, call)
}

// send sends a request of method to http://api/items/<call>, marked with
// the call; a POST's body is "order <call>" (replayable, with no
// Idempotency-Key). It returns the status and body.
func (s *replicaSet) send(t *testing.T, method, call string) (int, string) {
	t.Helper()
	var body io.Reader
	if method == http.MethodPost {
		body = strings.NewReader("order " + call)
	}
	r, err := http.NewRequestWithContext(testCtx(t), method, "http://api/items/"+call, body)
	require.NoError(t, err)
	r.Header.Set("X-Call", call)
	resp, err := s.client.Do(r)
	require.NoError(t, err)
	return resp.StatusCode, readBody(t, resp)
}

// stats returns the balancer's view of each endpoint, by base URL.
func (s *replicaSet) stats() map[string]balance.EndpointStats[string] {
	out := map[string]balance.EndpointStats[string]{}
	for _, st := range s.bal.Stats() {
		out[st.Key] = st
	}
	return out
}

// freshFirst makes a fresh endpoint's round-trip estimate 1 µs, below any
// loopback round trip: each replica is tried as soon as it is drawn, so
// the bad one is tried within the first calls, whatever the draws. (With
// the default, 30 ms, the replicas tried first win the pairs until the
// estimates have decayed: a replica may wait seconds for its first call.)
var freshFirst = balance.PeakEWMA(balance.DefaultDecay, time.Microsecond)

// untilHit makes calls of method through s, named method-0, method-1,
// ..., each answered 200 by one of the replicas in ok, until bad reports
// true (the bad replica was tried: at most 1000 calls), then 30 more; it
// returns how many it made.
func (s *replicaSet) untilHit(t *testing.T, method string, bad func() bool, ok ...*replica) int {
	t.Helper()
	names := map[string]bool{}
	for _, rp := range ok {
		names[rp.name] = true
	}
	n, after := 0, 30
	for ; after > 0; n++ {
		require.Less(t, n, 1000, "the bad replica was never tried")
		call := method + "-" + strconv.Itoa(n)
		code, body := s.send(t, method, call)
		require.Equal(t, http.StatusOK, code, "call %s: %s", call, body)
		name, echoed, _ := strings.Cut(body, ": ")
		require.True(t, names[name], "call %s answered by %q", call, body)
		if method == http.MethodPost {
			require.Equal(t, "/items/"+call+" order "+call, echoed, "the body reached the replica whole")
		}
		if bad() {
			after--
		}
	}
	return n
}

// assertRetriedElsewhere checks that each attempt of a call to badHost was
// followed by one to another replica.
func assertRetriedElsewhere(t *testing.T, rt *attempts, badHost string) {
	t.Helper()
	for call, as := range rt.byCall() {
		for i, a := range as {
			if a.host != badHost {
				continue
			}
			if assert.Less(t, i+1, len(as), "call %s ended at the bad replica: %v", call, as) {
				assert.NotEqual(t, badHost, as[i+1].host, "call %s was retried at the bad replica: %v", call, as)
			}
		}
	}
}

// Calls through a balancer of three replicas, each an endpoint of a
// concurrency limit of one: three calls at once go one to each replica
// (an endpoint whose limit is full is not ready); one after another, they
// spread over the three.
//
// spec: BAL3
func TestABalancerOfBaseURLsSpreadsTheCallsOverTheReplicas(t *testing.T) {
	arrived, release := make(chan string, 3), make(chan struct{})
	var rps []*replica
	for _, name := range []string{"a", "b", "c"} {
		rps = append(rps, newReplica(t, name, func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/items/held" {
				arrived <- name
				<-release
			}
			fmt.Fprintf(w, "%s: %s", name, r.URL.Path)
		}))
	}
	s := newReplicaSet(t, func() stages.Builder[req, res] { return stages.Stack[req, res]().Limit(1) },
		balance.PendingRequests(), balance.WithSource(rand.NewPCG(1, 2)))
	s.insert(t, rps[0].URL, rps[1].URL, rps[2].URL)

	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() {
			code, body := s.get(t, "held")
			assert.Equal(t, http.StatusOK, code, body)
		})
	}
	var where []string
	for range 3 {
		where = append(where, waitFor(t, arrived, "a held call"))
	}
	assert.ElementsMatch(t, []string{"a", "b", "c"}, where, "one call at each replica")
	close(release)
	wg.Wait()

	// One after another, over endpoints whose limit has room (each is
	// ready again at once): each call goes to one of the pair drawn, all
	// equally loaded.
	s = newReplicaSet(t, func() stages.Builder[req, res] { return stages.Stack[req, res]().Limit(8) },
		balance.PendingRequests(), balance.WithSource(rand.NewPCG(1, 2)))
	s.insert(t, rps[0].URL, rps[1].URL, rps[2].URL)
	const calls = 300
	for i := range calls {
		code, body := s.get(t, strconv.Itoa(i))
		require.Equal(t, http.StatusOK, code, body)
	}
	for _, rp := range rps {
		n := rp.hits.Load() - 1 // less the held call
		t.Logf("%s: %d calls", rp.name, n)
		assert.Greater(t, n, int64(calls/5), "replica %s", rp.name)
	}
}

// One replica of three is down (nothing listens on its port): a Retry
// outside the balancer sends each attempt that failed at it to another
// replica, so that no call fails, though each is a POST without an
// Idempotency-Key (a dial error shows it was never sent), and its body
// reaches the replica that answers whole; the replica down is tried about
// once a cooldown.
//
// spec: BAL3
func TestARetryOutsideTheBalancerSendsTheRetryToAnotherReplicaWhenOneIsDown(t *testing.T) {
	a, b := newReplica(t, "a", nil), newReplica(t, "b", nil)
	down := downReplica(t)
	s := newReplicaSet(t, func() stages.Builder[req, res] { return stages.Stack[req, res]().Limit(8) },
		freshFirst, balance.FailureCooldown(time.Minute)) // the test does not outlast it: the replica down is tried once
	s.insert(t, a.URL, b.URL, down)

	n := s.untilHit(t, http.MethodPost, func() bool { return s.stats()[down].Errors > 0 }, a, b)
	st := s.stats()[down]
	t.Logf("%d calls; the replica down: %+v", n, st)
	assert.Equal(t, uint64(1), st.Errors, "tried once: then it lost every pair for the cooldown")
	assert.True(t, st.Failing)
	assertRetriedElsewhere(t, s.rt, strings.TrimPrefix(down, "http://"))
	assert.Equal(t, int64(n), a.hits.Load()+b.hits.Load(), "every call reached a replica once")
}

// One replica of three answers 503 to every request. A 503 is a
// response, not an error, so the balancer does not count it against the
// replica; a breaker per endpoint that counts 5xx as failures does: it
// opens at the first 503, the next call it gets is refused at once, and
// the balancer then leaves the replica out until the breaker lets calls
// through again. The Retry outside the balancer retries the 503 and the
// refusal, so no call fails, and the replica got one request. (Costs are
// pending requests here, all equal, so that the replica is drawn again
// soon after its 503: under peak-EWMA, its first round trip, slower than
// the others' for the connection it made, may keep it out for seconds.)
//
// spec: BAL3
func TestABreakerPerReplicaTakesAReplicaAnswering503OutOfTheBalancer(t *testing.T) {
	a, b := newReplica(t, "a", nil), newReplica(t, "b", nil)
	sick := newReplica(t, "sick", func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "overloaded", http.StatusServiceUnavailable)
	})
	s := newReplicaSet(t, func() stages.Builder[req, res] {
		return stages.Stack[req, res]().
			Breaker(breaker.Classify(troupehttp.IsFailure), breaker.ConsecutiveFailures(1), breaker.OpenDelay(time.Minute)).
			Limit(8)
	}, balance.PendingRequests())
	s.insert(t, a.URL, b.URL, sick.URL)

	n := s.untilHit(t, http.MethodGet, func() bool { return s.stats()[sick.URL].Paused }, a, b)
	st := s.stats()[sick.URL]
	t.Logf("%d calls; the sick replica: %+v", n, st)
	assert.Equal(t, int64(1), sick.hits.Load(), "one 503, then its breaker was open")
	assert.True(t, st.Paused, "its breaker refused a call: left out until it lets calls through")
	assert.Equal(t, int64(n), a.hits.Load()+b.hits.Load())
	assertRetriedElsewhere(t, s.rt, sick.host())
}

// One replica of three hangs. A Timeout in each endpoint's pipeline
// (inside the balancer) fails the attempt that waits for it, and the
// balancer counts that against the replica: the Retry outside sends the
// retry to another replica, no call fails, and the replica that hangs is
// tried once a cooldown. (A Timeout outside the balancer would not do:
// the balancer cannot tell the end of an attempt's context from a caller
// that gave up, and counts neither.)
//
// spec: BAL3
func TestATimeoutPerReplicaAndARetryOutsideTheBalancerLeaveASlowReplica(t *testing.T) {
	a, b := newReplica(t, "a", nil), newReplica(t, "b", nil)
	slow := newReplica(t, "slow", func(_ http.ResponseWriter, r *http.Request) {
		<-r.Context().Done() // until the attempt's deadline cancels it
	})
	s := newReplicaSet(t, func() stages.Builder[req, res] {
		return stages.Stack[req, res]().Timeout(200 * time.Millisecond).Limit(8)
	}, freshFirst, balance.FailureCooldown(time.Minute))
	s.insert(t, a.URL, b.URL, slow.URL)

	n := s.untilHit(t, http.MethodGet, func() bool { return slow.hits.Load() > 0 }, a, b)
	st := s.stats()[slow.URL]
	t.Logf("%d calls; the slow replica: %+v", n, st)
	assert.Equal(t, int64(1), slow.hits.Load(), "tried once: then it lost every pair for the cooldown")
	assert.True(t, st.Failing)
	assert.Greater(t, st.RTT, 100*time.Millisecond, "its round trip counts, the timeout's (200 ms, decaying since)")
	assertRetriedElsewhere(t, s.rt, slow.host())
}

// A ReverseProxy over the Transport of a Retry outside the balancer: the
// gateway forwards each request to a replica that is up, whose Host
// header is its own (the Rewrite's SetURL clears the outgoing Host), with
// the gateway's X-Forwarded headers.
//
// spec: BAL3
func TestAReverseProxyOverTheBalancerForwardsToTheReplicas(t *testing.T) {
	var mu sync.Mutex
	hosts := map[string]bool{}
	answer := func(name string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			hosts[r.Host] = true
			mu.Unlock()
			fmt.Fprintf(w, "%s: %s for %s", name, r.URL.Path, r.Header.Get("X-Forwarded-Host"))
		}
	}
	a, b := newReplica(t, "a", answer("a")), newReplica(t, "b", answer("b"))
	down := downReplica(t)
	s := newReplicaSet(t, func() stages.Builder[req, res] { return stages.Stack[req, res]().Limit(8) },
		freshFirst, balance.FailureCooldown(time.Minute))
	s.insert(t, a.URL, b.URL, down)
	logical := &url.URL{Scheme: "http", Host: "inventory"}
	gw := httptest.NewServer(&httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(logical)
			r.SetXForwarded()
		},
		Transport:    troupehttp.Transport(s.stack),
		ErrorHandler: troupehttp.ErrorHandler,
	})
	t.Cleanup(gw.Close)
	hc, _ := newClient(t)
	gwHost := strings.TrimPrefix(gw.URL, "http://")
	for i := 0; i < 30 || s.stats()[down].Errors == 0; i++ {
		require.Less(t, i, 1000, "the replica down was never tried")
		resp, err := hc.Get(gw.URL + "/items/" + strconv.Itoa(i))
		require.NoError(t, err)
		body := readBody(t, resp)
		require.Equal(t, http.StatusOK, resp.StatusCode, body)
		assert.Regexp(t, "^[ab]: /items/"+strconv.Itoa(i)+" for "+gwHost+"$", body)
	}
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, map[string]bool{a.host(): true, b.host(): true}, hosts, "each replica saw its own Host")
	assert.Equal(t, uint64(1), s.stats()[down].Errors)
}

// A replica removed while calls are in flight at it: no new call goes to
// it; its calls in flight are answered; its pipeline is closed once they
// have their responses, and their bodies go on streaming from its server
// after that, read to their end.
//
// spec: BAL3
func TestARemovedReplicaDrainsItsCallsAndItsBodiesStreamOn(t *testing.T) {
	arrived := make(chan string, 3)
	headers, rest := make(chan struct{}), make(chan struct{})
	old := newReplica(t, "old", func(w http.ResponseWriter, r *http.Request) {
		arrived <- r.Header.Get("X-Call")
		<-headers
		fmt.Fprint(w, "old: first half, ")
		w.(http.Flusher).Flush()
		<-rest
		fmt.Fprint(w, "second half")
	})
	b, c := newReplica(t, "b", nil), newReplica(t, "c", nil)
	s := newReplicaSet(t, func() stages.Builder[req, res] { return stages.Stack[req, res]().Limit(8) })
	closed := make(chan struct{})
	svc, err := s.build(old.URL)
	require.NoError(t, err)
	s.ch <- balance.Change[string, req, res]{Op: balance.Insert, Key: old.URL, Service: &closeSpy{Service: svc, closed: closed}, Owned: true}
	s.sync()

	type got struct {
		code int
		body string
		err  error
	}
	outs := make(chan got, 3)
	for i := range 3 {
		go func() {
			r, _ := http.NewRequestWithContext(testCtx(t), http.MethodGet, "http://api/items/"+strconv.Itoa(i), nil)
			r.Header.Set("X-Call", "inflight-"+strconv.Itoa(i))
			resp, err := s.client.Do(r)
			if err != nil {
				outs <- got{err: err}
				return
			}
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			outs <- got{resp.StatusCode, string(body), err}
		}()
	}
	for range 3 {
		waitFor(t, arrived, "a call at the old replica")
	}
	s.insert(t, b.URL, c.URL)
	s.remove(old.URL)
	for i := range 20 {
		code, body := s.get(t, "new-"+strconv.Itoa(i))
		require.Equal(t, http.StatusOK, code)
		assert.Regexp(t, "^[bc]: ", body, "a new call goes to the replicas in the set")
	}
	assert.Equal(t, int64(3), old.hits.Load())
	select {
	case <-closed:
		t.Fatal("the old replica's pipeline was closed with calls in flight")
	default:
	}
	assert.NotContains(t, s.stats(), old.URL)

	close(headers)
	waitFor(t, closed, "the old replica's pipeline closed once its calls had their responses")
	close(rest)
	for range 3 {
		g := waitFor(t, outs, "a call in flight")
		require.NoError(t, g.err)
		assert.Equal(t, http.StatusOK, g.code)
		assert.Equal(t, "old: first half, second half", g.body, "the body streamed on after its pipeline closed")
	}
}

// closeSpy is an endpoint that closes its service and then closed.
type closeSpy struct {
	troupe.Service[req, res]
	closed chan struct{}
}

func (c *closeSpy) Close(ctx context.Context) error {
	err := c.Service.(troupe.Closer).Close(ctx)
	close(c.closed)
	return err
}

// waitFor returns what ch gives, failing the test when it gives nothing
// within a generous bound.
func waitFor[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
		var zero T
		return zero
	}
}
