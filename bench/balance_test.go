package bench

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/stages"
	"github.com/troupe-go/troupe/stages/balance"
)

// replica is a loopback HTTP server that answers /?v=N with N after its
// delay, or with 500 when it is failing. It has two workers: a request
// waits for one, so its latency grows with its load, as a real server's.
func replica(b *testing.B, delay time.Duration, failing bool) *httptest.Server {
	workers := make(chan struct{}, 2)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		workers <- struct{}{}
		time.Sleep(delay) // the server's work
		<-workers
		if failing {
			http.Error(w, "down", http.StatusInternalServerError)
			return
		}
		_, _ = io.WriteString(w, r.URL.Query().Get("v"))
	}))
	b.Cleanup(srv.Close)
	return srv
}

// replicaClient is the endpoint service of one replica: a GET of ?v=N.
func replicaClient(c *http.Client, url string) *actors.FuncService[int, int] {
	return actors.Func(func(ctx context.Context, v int) (int, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+"/?v="+strconv.Itoa(v), nil)
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
			return 0, fmt.Errorf("status %d", resp.StatusCode)
		}
		return strconv.Atoi(string(body))
	})
}

// roundRobin sends each request to the next endpoint in turn.
func roundRobin(eps []troupe.Service[int, int]) troupe.Service[int, int] {
	var next atomic.Uint64
	return actors.Func(func(ctx context.Context, v int) (int, error) {
		return troupe.Do(ctx, eps[(next.Add(1)-1)%uint64(len(eps))], v)
	})
}

// latencies runs n requests through svc from callers goroutines and
// returns their latencies, sorted, and how many failed.
func latencies(svc troupe.Service[int, int], n, callers int) ([]time.Duration, int64) {
	var next, failed atomic.Int64
	out := make([]time.Duration, n)
	var wg sync.WaitGroup
	for range callers {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
				start := time.Now()
				r, err := troupe.Do(context.Background(), svc, i)
				out[i] = time.Since(start)
				if err != nil || r != i {
					failed.Add(1)
				}
			}
		})
	}
	wg.Wait()
	slices.Sort(out)
	return out, failed.Load()
}

func p99(d []time.Duration) time.Duration { return d[len(d)*99/100] }

// BenchmarkBalanceSlowReplica: three loopback replicas of two workers
// each, one 10x slower than the others (10 ms of work against 1 ms), 16
// callers; each round sends 1,500 requests through round robin and 1,500
// through the power-of-two-choices balancer with peak-EWMA load (its
// defaults), in turn, over the same replicas. It reports both p99
// latencies and p2c's over round robin's (p99-x-rr; the target is at most
// 0.5), the medians over rounds.
func BenchmarkBalanceSlowReplica(b *testing.B) {
	c := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	defer c.CloseIdleConnections()
	var eps []troupe.Service[int, int]
	for _, d := range []time.Duration{time.Millisecond, time.Millisecond, 10 * time.Millisecond} {
		eps = append(eps, replicaClient(c, replica(b, d, false).URL))
	}
	rr := roundRobin(eps)
	bal, err := balance.New[int, int, int](nil)
	if err != nil {
		b.Fatal(err)
	}
	defer bal.Close(context.Background())
	for i, ep := range eps {
		bal.Insert(i, ep)
	}
	var rrs, p2cs, ratios []float64
	for b.Loop() {
		r, f1 := latencies(rr, 1500, 16)
		p, f2 := latencies(bal, 1500, 16)
		if f1+f2 > 0 {
			b.Fatalf("%d requests failed", f1+f2)
		}
		rrs, p2cs = append(rrs, float64(p99(r))), append(p2cs, float64(p99(p)))
		ratios = append(ratios, float64(p99(p))/float64(p99(r)))
	}
	b.ReportMetric(median(rrs)/1e6, "rr-p99-ms")
	b.ReportMetric(median(p2cs)/1e6, "p2c-p99-ms")
	b.ReportMetric(median(ratios), "p99-x-rr")
}

// BenchmarkBalanceFailingReplica: three loopback replicas, one answering
// every request with 500; a Retry(2) outside the balancer. It reports the
// share of requests that failed (error-rate; the target is near zero) and
// the share of attempts the failing replica got.
func BenchmarkBalanceFailingReplica(b *testing.B) {
	c := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	defer c.CloseIdleConnections()
	sys := actors.NewSystem()
	defer func() { _ = sys.Shutdown(context.Background()) }()
	bal, err := balance.New[int, int, int](nil)
	if err != nil {
		b.Fatal(err)
	}
	defer bal.Close(context.Background())
	for i, failing := range []bool{false, false, true} {
		bal.Insert(i, replicaClient(c, replica(b, time.Millisecond, failing).URL))
	}
	svc, err := stages.Stack[int, int]().Retry(2, nil).Build(sys, bal)
	if err != nil {
		b.Fatal(err)
	}
	defer svc.Close(context.Background())
	var rates []float64
	for b.Loop() {
		_, failed := latencies(svc, 1500, 16)
		rates = append(rates, float64(failed)/1500)
	}
	s := bal.Stats()
	var all uint64
	for _, e := range s {
		all += e.Picks
	}
	b.ReportMetric(median(rates), "error-rate")
	b.ReportMetric(float64(s[2].Picks)/float64(all), "failing-share")
}

// median returns the median of xs (which it sorts).
func median(xs []float64) float64 {
	slices.Sort(xs)
	return xs[len(xs)/2]
}
