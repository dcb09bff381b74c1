package bench

import (
	"context"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/stages/buffer"
)

// BenchmarkHop is one stage hop: reserve + call + reply through one stage
// actor to a no-op function, beside an unbuffered channel round trip and
// protoactor-go's RequestFuture round trip, in the same run.
func BenchmarkHop(b *testing.B) {
	b.Run("chan", func(b *testing.B) {
		req, rep := make(chan int), make(chan int)
		go func() {
			for v := range req {
				rep <- v
			}
		}()
		b.ReportAllocs()
		for b.Loop() {
			req <- 1
			<-rep
		}
		close(req)
	})
	b.Run("troupe", func(b *testing.B) {
		sys := actors.NewSystem()
		defer sys.Shutdown(context.Background())
		buf, err := buffer.New[int, int](sys, actors.Func(noop), 64)
		if err != nil {
			b.Fatal(err)
		}
		ctx := context.Background()
		b.ReportAllocs()
		for b.Loop() {
			p, err := buf.Reserve(ctx)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := p.Call(ctx, 1); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("protoactor", func(b *testing.B) {
		sys := actors.NewSystem()
		defer sys.Shutdown(context.Background())
		as := sys.ActorSystem()
		pid := as.Root.Spawn(actor.PropsFromFunc(func(c actor.Context) {
			if v, ok := c.Message().(int); ok {
				c.Respond(v)
			}
		}))
		defer as.Root.Stop(pid)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := as.Root.RequestFuture(pid, 1, time.Second).Result(); err != nil {
				b.Fatal(err)
			}
		}
	})
}
