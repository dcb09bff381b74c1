package balance_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/stages"
	"github.com/troupe-go/troupe/stages/balance"
	"github.com/troupe-go/troupe/supervisor"
)

// idlePipelines returns one supervised pipeline (a limit over a function)
// and two balancers, peak-EWMA and pending requests, over three more, and
// the function that closes them all.
func idlePipelines(b *testing.B) (one, ewma, pending troupe.Service[int, int], closeAll func()) {
	sys := actors.NewSystem()
	leaf := actors.Func(func(_ context.Context, v int) (int, error) { return v, nil })
	build := balance.Pipelines(sys, func(int) supervisor.Build[int, int] {
		return func(h troupe.Host) (troupe.Service[int, int], error) {
			return stages.Stack[int, int]().Limit(64).Build(h, leaf)
		}
	})
	one, err := build(0)
	if err != nil {
		b.Fatal(err)
	}
	e, err := balance.New[int, int, int](nil)
	if err != nil {
		b.Fatal(err)
	}
	p, err := balance.New[int, int, int](nil, balance.PendingRequests())
	if err != nil {
		b.Fatal(err)
	}
	for k := range 3 {
		svc, err := build(k + 1)
		if err != nil {
			b.Fatal(err)
		}
		e.Insert(k, svc)
		p.Insert(k, svc) // two balancers share the endpoints: each holds a permit of its own
	}
	return one, e, p, func() { // the system's shutdown closes the pipelines
		e.Close(context.Background())
		p.Close(context.Background())
		sys.Shutdown(context.Background())
	}
}

// BenchmarkBalancerOverIdlePipelines compares a call through one
// supervised pipeline with a call through a balancer over three of them:
// the balancer's cost is a pick, a reservation made again on the endpoint
// picked (a Reserve, and later the permit's Call, where the pipeline alone
// reserves and calls in one step) and the outcome recorded.
func BenchmarkBalancerOverIdlePipelines(b *testing.B) {
	one, ewma, pending, closeAll := idlePipelines(b)
	defer closeAll()
	for _, c := range []struct {
		name string
		svc  troupe.Service[int, int]
	}{{"pipeline", one}, {"peak-ewma-of-3", ewma}, {"pending-of-3", pending}} {
		for _, par := range []bool{false, true} {
			b.Run(fmt.Sprintf("%s/parallel=%v", c.name, par), func(b *testing.B) {
				ctx := context.Background()
				b.ReportAllocs()
				if !par {
					for i := 0; b.Loop(); i++ {
						if _, err := troupe.Do(ctx, c.svc, i); err != nil {
							b.Fatal(err)
						}
					}
					return
				}
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						if _, err := troupe.Do(ctx, c.svc, 1); err != nil {
							b.Error(err)
							return
						}
					}
				})
			})
		}
	}
}

// BenchmarkBalancerVersusPipeline measures the same three services in
// turn, in rounds of 5,000 calls, and reports each balancer's best round
// over the pipeline's best round (x-pipeline): the comparison a shared,
// noisy machine still gives within one run.
func BenchmarkBalancerVersusPipeline(b *testing.B) {
	one, ewma, pending, closeAll := idlePipelines(b)
	defer closeAll()
	svcs := []troupe.Service[int, int]{one, ewma, pending}
	best := []time.Duration{time.Hour, time.Hour, time.Hour}
	ctx := context.Background()
	for b.Loop() {
		for i, s := range svcs {
			start := time.Now()
			for j := range 5000 {
				if _, err := troupe.Do(ctx, s, j); err != nil {
					b.Fatal(err)
				}
			}
			best[i] = min(best[i], time.Since(start)/5000)
		}
	}
	b.ReportMetric(float64(best[0]), "pipeline-ns/call")
	b.ReportMetric(float64(best[1])/float64(best[0]), "peak-ewma-x-pipeline")
	b.ReportMetric(float64(best[2])/float64(best[0]), "pending-x-pipeline")
}
