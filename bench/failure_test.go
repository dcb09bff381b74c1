package bench

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	fstimeout "github.com/failsafe-go/failsafe-go/timeout"
)

// callerModes are the caller pools of the failure paths: one caller, and 64.
var callerModes = []struct {
	name    string
	callers int
}{{"seq", 1}, {"par64", 64}}

// failTimeout is the timeout of the timeout path: short, so that the
// benchmark is quick, and long beside a call's cost, so that what is
// measured is the wait and how late it ends.
const failTimeout = time.Millisecond

// BenchmarkFailure is the paths users hit when things go wrong, troupe
// beside peers doing the same work, one caller (seq) and 64 (par64):
//
//   - retry: the stack (limit 20 -> timeout 10 s -> retry up to 3,
//     no backoff -> rate limit 1e9/s) over a downstream that fails every
//     request's first attempt and answers its second: every request is
//     retried once (troupe's retry stage re-reserves the rate limit inside
//     it and sends again). Peers: funcstack, failsafe, chanchain (their
//     retry loops, as in BenchmarkStack).
//   - timeout: a timeout of failTimeout alone over a downstream that waits
//     for its context to end: every call times out. Peers: funcstack
//     (context.WithTimeout), failsafe (its Timeout policy). over-us is how
//     long a call took past the timeout, on average, in microseconds.
//   - ratelimit-<shape>: a rate limit of 10,000 requests a second over a
//     no-op downstream, offered as fast as the callers can (see rateShapes
//     for the shapes and the peers). ns/op is bound to be about 100,000 for
//     all; %rate is the rate achieved after the first burst against the
//     rate set (above 100: more than allowed; below: rate lost), and
//     cpu-ns/op what waiting costs.
//
// Every request is checked for the outcome its path must give: the right
// response after a retry, a timeout error, the right response after the
// wait.
func BenchmarkFailure(b *testing.B) {
	for _, mode := range callerModes {
		b.Run("retry/"+mode.name, func(b *testing.B) {
			for _, v := range []variant{
				funcstackVariant(stdStack),
				failsafeVariant(stdStack),
				chanchainVariant(stdStack, false),
				troupeVariant(stdStack),
			} {
				b.Run(v.name, func(b *testing.B) {
					down := newFailOnce(b.N)
					newCaller, stop := v.build(b, down.call)
					defer stop()
					runCallers(b, mode.callers, newCaller)
				})
			}
		})
	}
	for _, mode := range callerModes {
		b.Run("timeout/"+mode.name, func(b *testing.B) {
			for _, v := range timeoutVariants(failTimeout) {
				b.Run(v.name, func(b *testing.B) {
					newCaller, stop := v.build(b, waitCtx)
					defer stop()
					var lat atomic.Int64
					runCallers(b, mode.callers, func() callFn { return expectTimeout(newCaller(), &lat) })
					over := time.Duration(lat.Load()/int64(b.N)) - failTimeout
					b.ReportMetric(float64(over)/1e3, "over-us")
				})
			}
		})
	}
	for _, shape := range rateShapes() {
		for _, mode := range callerModes {
			b.Run("ratelimit-"+shape.name+"/"+mode.name, func(b *testing.B) {
				for _, v := range shape.variants {
					b.Run(v.name, func(b *testing.B) {
						newCaller, stop := v.build(b, noop)
						defer stop()
						elapsed := runCallers(b, mode.callers, newCaller)
						// The first burst requests go at once: count the rest.
						b.ReportMetric(100*float64(b.N-shape.burst)/elapsed.Seconds()/rlRate, "%rate")
					})
				}
			})
		}
	}
}

var errTransient = errors.New("bench: transient failure")

// failOnce is a downstream that fails the first call of every request and
// answers the next: requests are numbered 1 to n (runCallers), a flag each.
type failOnce struct{ tried []atomic.Bool }

func newFailOnce(n int) *failOnce { return &failOnce{tried: make([]atomic.Bool, n+1)} }

func (f *failOnce) call(_ context.Context, v int) (int, error) {
	if v < 1 || v >= len(f.tried) {
		return 0, fmt.Errorf("bench: request %d out of range", v)
	}
	if !f.tried[v].Swap(true) {
		return 0, errTransient
	}
	return v, nil
}

// waitCtx is a downstream that waits for its context to end.
func waitCtx(ctx context.Context, _ int) (int, error) {
	<-ctx.Done()
	return 0, ctx.Err()
}

// expectTimeout makes the timeout every call must get its success, and
// anything else a failure; it adds how long each call took to lat.
func expectTimeout(call callFn, lat *atomic.Int64) callFn {
	return func(ctx context.Context, v int) (int, error) {
		t := time.Now()
		_, err := call(ctx, v)
		lat.Add(int64(time.Since(t)))
		if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, fstimeout.ErrExceeded) {
			return v, nil
		}
		return 0, fmt.Errorf("want a timeout, got %v", err)
	}
}
