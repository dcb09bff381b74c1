package troupegrpc_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/troupe-go/troupe/stages"
	"github.com/troupe-go/troupe/stages/loadshed"
	"github.com/troupe-go/troupe/troupegrpc"
)

// variant is one way of making the same unary call over loopback.
type variant struct {
	name string
	cc   *grpc.ClientConn
}

// variants are the calls the benchmarks compare, to one echo server:
//
//   - bare: no interceptor;
//   - leaf: the client interceptor over the Invoke leaf alone;
//   - stack: the client interceptor over limit, timeout and retry (the
//     README's stack, less its rate limit);
//   - admission: a bare client, and the server interceptor over a load
//     shedder and a limit.
func variants(b *testing.B) []variant {
	e := &echo{unary: func(_ context.Context, _ int32, in string) (string, error) { return in, nil }}
	addr := serve(b, e)
	guardedAddr := guarded(b, e, admission(b, stages.Stack[*troupegrpc.ServerCall, any]().
		LoadShed(loadshed.Capacity(64)).
		Limit(1024)))
	return []variant{
		{"bare", dial(b, addr)},
		{"leaf", through(b, addr, build(b, stages.Stack[*troupegrpc.Call, troupegrpc.Result]()))},
		{"stack", through(b, addr, build(b, stages.Stack[*troupegrpc.Call, troupegrpc.Result]().
			Limit(1024).
			Timeout(10*time.Second).
			Layer(troupegrpc.Retry(3, nil))))},
		{"admission", dial(b, guardedAddr)},
	}
}

// BenchmarkUnaryOverhead makes one call of each variant per iteration, in
// a rotating order, from one caller, and reports the median time of each
// (ns/call), its ratio to the bare call's (x-bare), and its allocations
// per call, the server's included (allocs/call): the same run, the same
// moments, so a shared machine's drift hits every variant alike.
//
//	go test -run '^$' -bench UnaryOverhead -benchtime 20000x .
func BenchmarkUnaryOverhead(b *testing.B) {
	vs := variants(b)
	ctx := context.Background()
	took := make([][]time.Duration, len(vs))
	i := 0
	for b.Loop() {
		for k := range vs {
			v := (i + k) % len(vs)
			start := time.Now()
			if _, err := unary(ctx, vs[v].cc, "x"); err != nil {
				b.Fatal(err)
			}
			took[v] = append(took[v], time.Since(start))
		}
		i++
	}
	report(b, vs, took, "ns/call")
	for _, v := range vs {
		allocs := testing.AllocsPerRun(200, func() { _, _ = unary(ctx, v.cc, "x") })
		b.ReportMetric(allocs, v.name+"-allocs/call")
	}
}

// BenchmarkUnaryParallel makes 128 calls of each variant from 16 callers
// at once per iteration, in a rotating order, and reports the median time
// per call of each (the inverse of throughput) and its ratio to the bare
// calls'.
//
//	go test -run '^$' -bench UnaryParallel -benchtime 200x .
func BenchmarkUnaryParallel(b *testing.B) {
	const callers, each = 16, 8
	vs := variants(b)
	ctx := context.Background()
	took := make([][]time.Duration, len(vs))
	i := 0
	for b.Loop() {
		for k := range vs {
			v := (i + k) % len(vs)
			start := time.Now()
			var wg sync.WaitGroup
			for range callers {
				wg.Go(func() {
					for range each {
						if _, err := unary(ctx, vs[v].cc, "x"); err != nil {
							b.Error(err)
							return
						}
					}
				})
			}
			wg.Wait()
			took[v] = append(took[v], time.Since(start)/(callers*each))
		}
		i++
	}
	report(b, vs, took, "ns/call")
}

// report reports each variant's median and its ratio to the first's.
func report(b *testing.B, vs []variant, took [][]time.Duration, unit string) {
	bare := median(took[0])
	for v := range vs {
		m := median(took[v])
		b.ReportMetric(float64(m.Nanoseconds()), vs[v].name+"-"+unit)
		if v > 0 && bare > 0 {
			b.ReportMetric(float64(m)/float64(bare), vs[v].name+"-x-bare")
		}
	}
	b.ReportMetric(0, "ns/op") // an iteration is many calls: see the medians
}

func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	ds = slices.Clone(ds)
	slices.Sort(ds)
	return ds[len(ds)/2]
}
