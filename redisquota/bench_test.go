package redisquota_test

import (
	"context"
	"testing"
	"time"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/redisquota"
	"github.com/troupe-go/troupe/stages/ratelimit"
	"github.com/troupe-go/troupe/troupetest"
)

// A rate no benchmark reaches, with a burst large enough that a grant
// never says "the last unit for a while": what is measured is the cost of
// an admission, not waiting for one.
var (
	benchRate  = ratelimit.Rate{Num: 1_000_000, Per: time.Second}
	benchBurst = redisquota.Burst(100_000)
)

func noop(_ context.Context, v int) (int, error) { return v, nil }

// benchStage runs b.N calls through svc: sequentially, or from 8
// goroutines with par.
func benchStage(b *testing.B, svc troupe.Service[int, int], par bool) {
	b.ReportAllocs()
	ctx := context.Background()
	if !par {
		for i := 0; b.Loop(); i++ {
			if _, err := troupe.Do(ctx, svc, i); err != nil {
				b.Fatal(err)
			}
		}
		return
	}
	b.SetParallelism(4) // 8 callers on 2 cores
	b.ResetTimer()      // the setup (a fallback's first unit) is not measured
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := troupe.Do(ctx, svc, 1); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkAdmission is the cost of one admission through a rate limit
// stage over a no-op service: the in-process limiter, the shared one
// (Redis on loopback; its round trip alone as "allow"), the fallback's
// local share while Redis is down, and a SharedLimit (a lease acquired
// and released per call), in the same run.
func BenchmarkAdmission(b *testing.B) {
	r := startRedis(b)
	sys := troupetest.NewSystem(b)
	inner := actors.Func(noop)
	stage := func(b *testing.B, opts ...ratelimit.Option) troupe.Service[int, int] {
		rl, err := ratelimit.New[int, int](sys, inner, benchRate, opts...)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = rl.Close(context.Background()) })
		return rl
	}
	limiter := func(b *testing.B, addr string, opts ...redisquota.Option) *redisquota.Limiter {
		lim, err := redisquota.NewLimiter(newClient(b, addr), b.Name(), benchRate, append(opts, benchBurst)...)
		if err != nil {
			b.Fatal(err)
		}
		return lim
	}
	for _, par := range []bool{false, true} {
		mode := "seq"
		if par {
			mode = "par8"
		}
		b.Run(mode+"/inprocess", func(b *testing.B) { benchStage(b, stage(b), par) })
		b.Run(mode+"/redis", func(b *testing.B) {
			lim := limiter(b, r.addr)
			benchStage(b, stage(b, ratelimit.Remote(lim)), par)
		})
		b.Run(mode+"/fallback", func(b *testing.B) { // a Redis that is not there
			lim := limiter(b, "127.0.0.1:1", redisquota.OnUnavailable(redisquota.Fallback(1)), redisquota.Logger(discard()))
			svc := stage(b, ratelimit.Remote(lim))
			if _, err := troupe.Do(context.Background(), svc, 0); err != nil { // the outage's first unit, a Per after it began
				b.Fatal(err)
			}
			benchStage(b, svc, par)
		})
		b.Run(mode+"/sharedlimit", func(b *testing.B) {
			bud, err := newBudget(b, newClient(b, r.addr), b.Name(), 1000)
			if err != nil {
				b.Fatal(err)
			}
			sl, err := redisquota.NewLimit[int, int](sys, inner, bud)
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { _ = sl.Close(context.Background()) })
			benchStage(b, sl, par)
		})
	}
	b.Run("allow", func(b *testing.B) {
		lim := limiter(b, r.addr)
		ctx := context.Background()
		for b.Loop() {
			if _, _, err := lim.Allow(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
}
