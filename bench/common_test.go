package bench

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// callFn is one request through a variant: it returns the downstream's
// response (the input, for the downstreams here) or an error.
type callFn func(ctx context.Context, v int) (int, error)

// variant is one way of running a stack. build makes it over down and
// returns newCaller, called once by each caller goroutine for its own call
// function (a variant whose callers need private state, such as a reply
// channel, makes it there), and stop, which tears everything down.
type variant struct {
	name  string
	build func(b *testing.B, down callFn) (newCaller func() callFn, stop func())
}

// shared is newCaller for variants whose callers share one call function.
func shared(call callFn) func() callFn { return func() callFn { return call } }

// runCallers runs b.N requests through the variant with a fixed pool of n
// caller goroutines pulling request numbers from a shared atomic counter
// (the same pool for every variant: n=1 is the sequential case). It fails
// the benchmark when a request fails or returns the wrong response, and
// returns the time the requests took.
//
// Beside ns/op it reports cpu-ns/op: the CPU time the whole process used
// (user and system, getrusage) while the requests ran, per request. It
// counts every goroutine of the process, the variant's own and the
// runtime's (GC, the scheduler), and not the CPU of other processes. With
// more than one core busy it exceeds ns/op: two cores busy for the whole
// run show as twice ns/op.
func runCallers(b *testing.B, n int, newCaller func() callFn) time.Duration {
	b.Helper()
	ctx := context.Background()
	var next, failed, wrong atomic.Int64
	var firstErr atomic.Pointer[error]
	total := int64(b.N)
	var wg sync.WaitGroup
	b.ReportAllocs()
	b.ResetTimer()
	cpu0, cpuOK := processCPU()
	start := time.Now()
	for range n {
		wg.Go(func() {
			call := newCaller()
			for {
				i := next.Add(1)
				if i > total {
					return
				}
				r, err := call(ctx, int(i))
				switch {
				case err != nil:
					if failed.Add(1) == 1 {
						e := err
						firstErr.Store(&e)
					}
				case r != int(i):
					wrong.Add(1)
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	cpu1, _ := processCPU()
	b.StopTimer()
	if f := failed.Load(); f > 0 {
		b.Fatalf("%d of %d requests failed; first: %v", f, total, *firstErr.Load())
	}
	if w := wrong.Load(); w > 0 {
		b.Fatalf("%d of %d requests got a wrong response", w, total)
	}
	if cpuOK {
		b.ReportMetric(float64(cpu1-cpu0)/float64(b.N), "cpu-ns/op")
	}
	return elapsed
}

// noop is the no-op downstream: it returns its input.
func noop(_ context.Context, v int) (int, error) { return v, nil }
