package balance_test

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/stages"
	"github.com/troupe-go/troupe/stages/balance"
	"github.com/troupe-go/troupe/supervisor"
	"github.com/troupe-go/troupe/troupetest"
)

// server is a loopback HTTP server that answers /?id=N with N, calling
// hold first when it is set.
func server(t *testing.T, hold func(id int)) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, err := strconv.Atoi(r.URL.Query().Get("id"))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if hold != nil {
			hold(id)
		}
		fmt.Fprint(w, id)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// client returns an HTTP client whose idle connections are closed when
// the test ends.
func client(t *testing.T) *http.Client {
	c := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	t.Cleanup(c.CloseIdleConnections)
	return c
}

// httpEndpoint is a service that sends its request to the server at url.
func httpEndpoint(c *http.Client, url string) *actors.FuncService[int, int] {
	return actors.Func(func(ctx context.Context, id int) (int, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+"/?id="+strconv.Itoa(id), nil)
		if err != nil {
			return 0, err
		}
		resp, err := c.Do(req)
		if err != nil {
			return 0, err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			return 0, err
		}
		if resp.StatusCode != http.StatusOK {
			return 0, fmt.Errorf("status %d: %s", resp.StatusCode, body)
		}
		return strconv.Atoi(string(body))
	})
}

// waitFor fails the test when ch is not ready within a generous bound.
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

// A removed endpoint, on real connections: its calls in flight finish
// and are answered, no new call goes to it, and only then is it closed.
//
// spec: BAL1
func TestARemovedEndpointFinishesItsCallsInFlightThenCloses(t *testing.T) {
	release, arrived := make(chan struct{}), make(chan int, 3)
	var inflight atomic.Int32
	slow := server(t, func(id int) {
		inflight.Add(1)
		defer inflight.Add(-1)
		arrived <- id
		<-release
	})
	var fastCalls atomic.Int32
	fast := server(t, func(int) { fastCalls.Add(1) })
	c := client(t)
	closed := make(chan int32, 1)
	a := &closable{Service: httpEndpoint(c, slow.URL), onClose: func() { closed <- inflight.Load() }}

	ch := make(chan balance.Change[string, int, int])
	bal, err := balance.New(balance.Channel(ch))
	require.NoError(t, err)
	defer bal.Close(context.Background())
	ch <- balance.Change[string, int, int]{Op: balance.Insert, Key: "a", Service: a, Owned: true}
	var outs []<-chan troupetest.Result[int]
	for id := range 3 {
		outs = append(outs, troupetest.Go[int, int](context.Background(), bal, id))
	}
	for range 3 {
		waitFor(t, arrived, "a call at the slow server")
	}
	ch <- balance.Change[string, int, int]{Op: balance.Insert, Key: "b", Service: httpEndpoint(c, fast.URL)}
	ch <- balance.Change[string, int, int]{Op: balance.Remove, Key: "a"}
	// The source applies its changes in order, taking the next only once
	// the last is applied: once this one is taken, a is out.
	ch <- balance.Change[string, int, int]{Op: balance.Remove, Key: "none"}
	for id := 3; id < 23; id++ {
		out, err := troupe.Do[int, int](context.Background(), bal, id)
		require.NoError(t, err)
		assert.Equal(t, id, out)
	}
	assert.Equal(t, int32(20), fastCalls.Load(), "every new call went to b")
	select {
	case <-closed:
		t.Fatal("a was closed with its calls in flight")
	default:
	}
	close(release)
	for id, out := range outs {
		r := waitFor(t, out, "a call in flight")
		require.NoError(t, r.Err)
		assert.Equal(t, id, r.Value)
	}
	assert.Zero(t, waitFor(t, closed, "a's Close"), "closed once its calls were answered")
}

// 10,000 calls over real connections while endpoints, each a supervised
// pipeline of its own, are inserted and removed: every call gets exactly
// one outcome, a success, and reaches exactly one server exactly once.
//
// spec: BAL1
func TestEndpointsComingAndGoingLoseAndDoubleNoCall(t *testing.T) {
	const calls, callers, servers = 10_000, 16, 6
	var mu sync.Mutex
	seen := make(map[int]int, calls)
	var urls [servers]string
	for i := range urls {
		urls[i] = server(t, func(id int) {
			mu.Lock()
			seen[id]++
			mu.Unlock()
		}).URL
	}
	c := client(t)
	sys := troupetest.NewSystem(t)
	build := balance.Pipelines(sys, func(k int) supervisor.Build[int, int] {
		return func(h troupe.Host) (troupe.Service[int, int], error) {
			return stages.Stack[int, int]().Limit(4).Build(h, httpEndpoint(c, urls[k]))
		}
	})
	ch := make(chan balance.Change[int, int, int])
	bal, err := balance.New(balance.Channel(ch))
	require.NoError(t, err)
	present := map[int]bool{}
	toggle := func(k int) {
		if present[k] {
			ch <- balance.Change[int, int, int]{Op: balance.Remove, Key: k}
			delete(present, k)
			return
		}
		svc, err := build(k)
		require.NoError(t, err)
		ch <- balance.Change[int, int, int]{Op: balance.Insert, Key: k, Service: svc, Owned: true}
		present[k] = true
	}
	for k := range 3 {
		toggle(k)
	}

	churn, done := make(chan struct{}, 1), make(chan struct{})
	var changes int
	go func() {
		defer close(done)
		r := rand.New(rand.NewPCG(5, 6))
		for range churn {
			k := r.IntN(servers)
			if present[k] && len(present) == 1 {
				continue
			}
			toggle(k)
			changes++
		}
	}()
	var next, answered, failed atomic.Int64
	var wg sync.WaitGroup
	for range callers {
		wg.Go(func() {
			for id := int(next.Add(1)) - 1; id < calls; id = int(next.Add(1)) - 1 {
				out, err := troupe.Do[int, int](context.Background(), bal, id)
				answered.Add(1)
				if err != nil || out != id {
					failed.Add(1)
					t.Errorf("call %d: %d, %v", id, out, err)
				}
				if id%50 == 0 {
					select {
					case churn <- struct{}{}:
					default:
					}
				}
			}
		})
	}
	wg.Wait()
	close(churn)
	<-done
	require.NoError(t, bal.Close(context.Background()))
	t.Logf("%d endpoint changes during %d calls", changes, calls)
	assert.Greater(t, changes, 20)
	assert.Equal(t, int64(calls), answered.Load())
	assert.Zero(t, failed.Load())
	mu.Lock()
	defer mu.Unlock()
	assert.Len(t, seen, calls, "every call reached a server")
	for id, n := range seen {
		if n != 1 {
			t.Errorf("call %d reached the servers %d times", id, n)
		}
	}
}
