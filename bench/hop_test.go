package bench

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/actors/stagekit"
	"github.com/troupe-go/troupe/stages/buffer"
)

// BenchmarkHop is one stage hop, reserve + call + reply through one Buffer
// stage to a no-op function, compared like with like in two groups, one
// caller each:
//
//   - goroutines: the hop crosses to another goroutine and back. troupe's
//     Buffer is spawned with inline dispatch off (stagekit's Config.Inline
//     -1), so every request wakes the stage's own goroutine, which hands the
//     call back to the caller; beside an unbuffered channel round trip to a
//     goroutine (chan) and protoactor-go's RequestFuture round trip.
//   - inline: the hop stays on the caller's goroutine. troupe's Buffer as
//     users get it (buffer.New: a caller that finds the stage idle runs it
//     itself) beside the no-op function called directly (direct).
func BenchmarkHop(b *testing.B) {
	b.Run("goroutines/chan", func(b *testing.B) {
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
	b.Run("goroutines/troupe", func(b *testing.B) {
		sys := actors.NewSystem()
		defer func() { _ = sys.Shutdown(context.Background()) }()
		cfg := stagekit.Config{Name: "buffer", Capacity: 64, Inline: -1}
		st, err := stagekit.Spawn(sys, cfg, actors.Func(noop), stagekit.Passthrough[int, int]{})
		if err != nil {
			b.Fatal(err)
		}
		defer func() { _ = st.Close(context.Background()) }()
		runCallers(b, 1, shared(func(ctx context.Context, v int) (int, error) {
			p, err := st.Reserve(ctx)
			if err != nil {
				return 0, err
			}
			return p.Call(ctx, v)
		}))
	})
	b.Run("goroutines/protoactor", func(b *testing.B) {
		as := quietActorSystem()
		defer as.Shutdown()
		root := as.Root
		pid := root.Spawn(actor.PropsFromFunc(func(c actor.Context) {
			if v, ok := c.Message().(int); ok {
				c.Respond(v)
			}
		}))
		defer root.Stop(pid)
		runCallers(b, 1, shared(func(_ context.Context, v int) (int, error) {
			r, err := root.RequestFuture(pid, v, time.Second).Result()
			if err != nil {
				return 0, err
			}
			if r, ok := r.(int); ok {
				return r, nil
			}
			return 0, fmt.Errorf("protoactor: unexpected response %T", r)
		}))
	})
	b.Run("inline/direct", func(b *testing.B) {
		runCallers(b, 1, shared(noop))
	})
	b.Run("inline/troupe", func(b *testing.B) {
		sys := actors.NewSystem()
		defer func() { _ = sys.Shutdown(context.Background()) }()
		buf, err := buffer.New[int, int](sys, actors.Func(noop), 64)
		if err != nil {
			b.Fatal(err)
		}
		defer func() { _ = buf.Close(context.Background()) }()
		runCallers(b, 1, shared(func(ctx context.Context, v int) (int, error) {
			p, err := buf.Reserve(ctx)
			if err != nil {
				return 0, err
			}
			return p.Call(ctx, v)
		}))
	})
}

// quietActorSystem is a protoactor-go system that logs nothing: its start-up
// line would land in the middle of a benchmark's result line.
func quietActorSystem() *actor.ActorSystem {
	return actor.NewActorSystem(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger {
		return slog.New(slog.DiscardHandler)
	}))
}
