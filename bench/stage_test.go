package bench

import (
	"context"
	"testing"
	"time"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/stages/adaptive"
	"github.com/troupe-go/troupe/stages/breaker"
	"github.com/troupe-go/troupe/stages/buffer"
	"github.com/troupe-go/troupe/stages/fallback"
	"github.com/troupe-go/troupe/stages/filter"
	"github.com/troupe-go/troupe/stages/hedge"
	"github.com/troupe-go/troupe/stages/limit"
	"github.com/troupe-go/troupe/stages/loadshed"
	"github.com/troupe-go/troupe/stages/ratelimit"
	"github.com/troupe-go/troupe/stages/reconnect"
	"github.com/troupe-go/troupe/stages/retry"
	"github.com/troupe-go/troupe/stages/spawnready"
	"github.com/troupe-go/troupe/stages/timeout"
)

// stageService is a running stage: a service that can be closed.
type stageService interface {
	troupe.Service[int, int]
	troupe.Closer
}

// oneStage names a stage and spawns it, with its defaults, over inner.
type oneStage struct {
	name  string
	spawn func(h troupe.Host, inner troupe.Service[int, int]) (stageService, error)
}

func spawnAs[S stageService](s S, err error) (stageService, error) { return s, err }

// singleStages is every stage of the library, each with the parameters of
// the stack where it has one there, defaults otherwise.
var singleStages = []oneStage{
	{"buffer", func(h troupe.Host, in troupe.Service[int, int]) (stageService, error) {
		return spawnAs(buffer.New(h, in, 64))
	}},
	{"limit", func(h troupe.Host, in troupe.Service[int, int]) (stageService, error) {
		return spawnAs(limit.New(h, in, 20))
	}},
	{"timeout", func(h troupe.Host, in troupe.Service[int, int]) (stageService, error) {
		return spawnAs(timeout.New(h, in, 10*time.Second))
	}},
	{"retry", func(h troupe.Host, in troupe.Service[int, int]) (stageService, error) {
		return spawnAs(retry.New(h, in, retry.Attempts[int, int]{Max: 3}))
	}},
	{"ratelimit", func(h troupe.Host, in troupe.Service[int, int]) (stageService, error) {
		return spawnAs(ratelimit.New(h, in, ratelimit.Rate{Num: 1e9, Per: time.Second}))
	}},
	{"loadshed", func(h troupe.Host, in troupe.Service[int, int]) (stageService, error) {
		return spawnAs(loadshed.New(h, in))
	}},
	{"filter", func(h troupe.Host, in troupe.Service[int, int]) (stageService, error) {
		return spawnAs(filter.NewFilter(h, in, func(v int) (int, error) { return v, nil }))
	}},
	{"spawnready", func(h troupe.Host, in troupe.Service[int, int]) (stageService, error) {
		return spawnAs(spawnready.New(h, in))
	}},
	{"fallback", func(h troupe.Host, in troupe.Service[int, int]) (stageService, error) {
		return spawnAs(fallback.New(h, in, func(context.Context, int, error) (int, error) { return 0, nil }))
	}},
	{"hedge", func(h troupe.Host, in troupe.Service[int, int]) (stageService, error) {
		return spawnAs(hedge.New(h, in, hedge.Delay(time.Second)))
	}},
	{"adaptive", func(h troupe.Host, in troupe.Service[int, int]) (stageService, error) {
		return spawnAs(adaptive.New(h, in))
	}},
	{"breaker", func(h troupe.Host, in troupe.Service[int, int]) (stageService, error) {
		return spawnAs(breaker.New(h, in))
	}},
	{"loadshed-prio", func(h troupe.Host, in troupe.Service[int, int]) (stageService, error) {
		return spawnAs(loadshed.New(h, in, loadshed.Capacity(20), loadshed.KeepFor(loadshed.High, 5)))
	}},
	{"reconnect", func(h troupe.Host, in troupe.Service[int, int]) (stageService, error) {
		dial := func(context.Context, string) (troupe.Service[int, int], error) { return in, nil }
		return spawnAs(reconnect.New(h, reconnect.Dialer(dial), "bench"))
	}},
}

// BenchmarkStage is every stage alone: reserve + call + reply through one
// stage over a no-op function, by one caller, beside an unbuffered channel
// round trip (chan) in the same run. A reconnect stage is connected by a
// warm-up request before timing.
func BenchmarkStage(b *testing.B) {
	b.Run("chan", func(b *testing.B) {
		req, rep := make(chan int), make(chan int)
		go func() {
			for v := range req {
				rep <- v
			}
		}()
		defer close(req)
		runCallers(b, 1, shared(func(_ context.Context, v int) (int, error) {
			req <- v
			return <-rep, nil
		}))
	})
	for _, s := range singleStages {
		b.Run(s.name, func(b *testing.B) {
			sys := actors.NewSystem()
			defer func() { _ = sys.Shutdown(context.Background()) }()
			st, err := s.spawn(sys, actors.Func(noop))
			if err != nil {
				b.Fatal(err)
			}
			defer func() { _ = st.Close(context.Background()) }()
			if _, err := troupe.Do(context.Background(), st, 0); err != nil {
				b.Fatal(err) // warm-up: connects a reconnect stage
			}
			runCallers(b, 1, shared(func(ctx context.Context, v int) (int, error) {
				p, err := st.Reserve(ctx)
				if err != nil {
					return 0, err
				}
				return p.Call(ctx, v)
			}))
		})
	}
}
