package bench

import (
	"context"
	"testing"
	"time"

	"github.com/failsafe-go/failsafe-go"
	fsratelimiter "github.com/failsafe-go/failsafe-go/ratelimiter"
	fstimeout "github.com/failsafe-go/failsafe-go/timeout"
	"golang.org/x/time/rate"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/stages"
	"github.com/troupe-go/troupe/stages/ratelimit"
)

// The variants of the failure paths that BenchmarkStack's variants do not
// cover: one policy alone, troupe's stage beside its peers' equivalents.

// troupeOf is the stack bld builds, over the downstream, called with
// troupe.Do.
func troupeOf(name string, bld stages.Builder[int, int]) variant {
	return troupeWith(name, func(*testing.B) stages.Builder[int, int] { return bld })
}

// troupeWith is troupeOf with a builder made for the benchmark that runs
// the variant.
func troupeWith(name string, bld func(*testing.B) stages.Builder[int, int]) variant {
	return variant{name, func(b *testing.B, down callFn) (func() callFn, func()) {
		sys := actors.NewSystem()
		st, err := bld(b).Build(sys, actors.Func(down))
		if err != nil {
			b.Fatal(err)
		}
		return shared(func(ctx context.Context, v int) (int, error) {
				return troupe.Do(ctx, st, v)
			}), func() {
				_ = st.Close(context.Background())
				_ = sys.Shutdown(context.Background())
			}
	}}
}

// failsafeOf is failsafe-go's executor of the policy that policy makes
// (one executor for every caller) over the downstream, which gets the
// execution's context.
func failsafeOf(name string, policy func() failsafe.Policy[int]) variant {
	return variant{name, func(_ *testing.B, down callFn) (func() callFn, func()) {
		ex := failsafe.With(policy())
		return shared(func(ctx context.Context, v int) (int, error) {
			return ex.WithContext(ctx).GetWithExecution(func(exec failsafe.Execution[int]) (int, error) {
				return down(exec.Context(), v)
			})
		}), func() {}
	}}
}

// ---- timeout: a deadline of d on every call ----

func timeoutVariants(d time.Duration) []variant {
	return []variant{
		{"funcstack", func(_ *testing.B, down callFn) (func() callFn, func()) {
			return shared(func(ctx context.Context, v int) (int, error) {
				ctx, cancel := context.WithTimeout(ctx, d)
				defer cancel()
				return down(ctx, v)
			}), func() {}
		}},
		failsafeOf("failsafe", func() failsafe.Policy[int] { return fstimeout.New[int](d) }),
		troupeOf("troupe", stages.Stack[int, int]().Timeout(d)),
	}
}

// ---- rate limit: 10,000 requests a second everywhere, in four shapes ----

// rlRate is the rate limit's rate, in requests per second.
const rlRate = 10_000

// rateShape is one shape of rate limit and its variants.
type rateShape struct {
	name     string
	burst    int // requests that may go at once at the start
	variants []variant
}

// rateShapes are the shapes, each at rlRate:
//
//   - window-1ms, window-10ms: a fixed window of 10 requests per 1 ms, of
//     100 per 10 ms (troupe's default mode, failsafe-go's bursty limiter);
//   - bucket: a token bucket of 10 refilled at the rate (troupe's
//     Smooth(10), x/time/rate with burst 10);
//   - spaced: one request every 100 us, no burst (troupe's Smooth(1),
//     failsafe-go's smooth limiter, x/time/rate with burst 1).
//
// failsafe-go's limiters wait at most a minute here (their default of 0
// rejects instead of waiting).
func rateShapes() []rateShape {
	window := func(name string, num int, per time.Duration) rateShape {
		return rateShape{name, num, []variant{
			failsafeOf("failsafe", func() failsafe.Policy[int] {
				return fsratelimiter.NewBurstyBuilder[int](uint(num), per).WithMaxWaitTime(time.Minute).Build()
			}),
			troupeOf("troupe", stages.Stack[int, int]().RateLimit(ratelimit.Rate{Num: num, Per: per})),
		}}
	}
	r := ratelimit.Rate{Num: 10, Per: time.Millisecond}
	return []rateShape{
		window("window-1ms", 10, time.Millisecond),
		window("window-10ms", 100, 10*time.Millisecond),
		{"bucket", 10, []variant{
			xrateOf(10),
			troupeOf("troupe", stages.Stack[int, int]().RateLimit(r, ratelimit.Smooth(10))),
		}},
		{"spaced", 1, []variant{
			failsafeOf("failsafe", func() failsafe.Policy[int] {
				return fsratelimiter.NewSmoothBuilder[int](10, time.Millisecond).WithMaxWaitTime(time.Minute).Build()
			}),
			xrateOf(1),
			troupeOf("troupe", stages.Stack[int, int]().RateLimit(r, ratelimit.Smooth(1))),
		}},
	}
}

// xrateOf is an x/time/rate limiter at rlRate with burst, waited on
// (Wait) before each call.
func xrateOf(burst int) variant {
	return variant{"xrate", func(_ *testing.B, down callFn) (func() callFn, func()) {
		lim := rate.NewLimiter(rlRate, burst)
		return shared(func(ctx context.Context, v int) (int, error) {
			if err := lim.Wait(ctx); err != nil {
				return 0, err
			}
			return down(ctx, v)
		}), func() {}
	}}
}
