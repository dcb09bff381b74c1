package bench

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"
	"testing"
	"time"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/supervisor"
)

// idlePipelines is how many idle pipelines BenchmarkPipelines spawns.
const idlePipelines = 10_000

// BenchmarkPipelines spawns 10,000 idle 4-stage pipelines (the stack:
// limit 20 -> timeout 10 s -> retry up to 3 -> rate limit 1e9/s over a no-op
// function; spawned, carrying no traffic), measures what they cost, closes
// them all and measures again. Two ways of spawning:
//
//   - supervised: supervisor.New per pipeline, each a host (supervisor
//     actor) of its own: the many-downstreams shape;
//   - builder: troupe.NewBuilder(...).Build(sys, leaf), all in the system's
//     root host.
//
// Reported (memory over the baseline taken before spawning, after two GCs):
//
//   - MiB-inuse: heap in use + goroutine stacks in use (MemStats.HeapInuse +
//     StackInuse), with every pipeline up (target: under 256 MiB);
//   - MiB-sys: memory obtained from the OS and not released
//     (MemStats.Sys - HeapReleased), with every pipeline up;
//   - KiB/pipeline: MiB-inuse per pipeline;
//   - goroutines: goroutines the idle pipelines hold;
//   - MiB-inuse-closed, MiB-sys-closed, goroutines-closed: the same once every
//     pipeline is closed (after debug.FreeOSMemory): what stopping returned.
//
// ns/op is the time to spawn and close them all. Run it with -benchtime 1x;
// each iteration does the whole thing. About 10 s.
func BenchmarkPipelines(b *testing.B) {
	b.Run("supervised", func(b *testing.B) {
		for range b.N {
			runPipelines(b, func(sys *actors.System, i int) (troupe.Closer, error) {
				return supervisor.New(sys, fmt.Sprintf("p%d", i), func(h troupe.Host) (troupe.Service[int, int], error) {
					return troupeBuilder(stdStack).Build(h, actors.Func(noop))
				})
			})
		}
	})
	b.Run("builder", func(b *testing.B) {
		for range b.N {
			runPipelines(b, func(sys *actors.System, _ int) (troupe.Closer, error) {
				return troupeBuilder(stdStack).Build(sys, actors.Func(noop))
			})
		}
	})
}

// footprint is the memory and goroutines in use.
type footprint struct {
	inuse, sys uint64
	goroutines int
}

// settle waits until the goroutine count stops changing (idle stages end
// their goroutines asynchronously), then collects twice and reads the
// footprint.
func settle(release bool) footprint {
	prev := -1
	for range 100 {
		n := runtime.NumGoroutine()
		if n == prev {
			break
		}
		prev = n
		time.Sleep(20 * time.Millisecond)
	}
	runtime.GC()
	runtime.GC()
	if release {
		debug.FreeOSMemory()
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return footprint{ms.HeapInuse + ms.StackInuse, ms.Sys - ms.HeapReleased, runtime.NumGoroutine()}
}

func runPipelines(b *testing.B, spawn func(sys *actors.System, i int) (troupe.Closer, error)) {
	b.StopTimer()
	sys := actors.NewSystem()
	defer func() { _ = sys.Shutdown(context.Background()) }()
	base := settle(true)
	b.StartTimer()
	ps := make([]troupe.Closer, 0, idlePipelines)
	for i := range idlePipelines {
		p, err := spawn(sys, i)
		if err != nil {
			b.Fatalf("pipeline %d: %v", i, err)
		}
		ps = append(ps, p)
	}
	b.StopTimer()
	up := settle(false)
	b.StartTimer()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for i, p := range ps {
		if err := p.Close(ctx); err != nil {
			b.Fatalf("closing pipeline %d: %v", i, err)
		}
	}
	b.StopTimer()
	clear(ps)
	ps = nil
	closed := settle(true)

	mib := func(v, base uint64) float64 { return (float64(v) - float64(base)) / (1 << 20) }
	b.ReportMetric(mib(up.inuse, base.inuse), "MiB-inuse")
	b.ReportMetric(mib(up.sys, base.sys), "MiB-sys")
	b.ReportMetric((float64(up.inuse)-float64(base.inuse))/1024/idlePipelines, "KiB/pipeline")
	b.ReportMetric(float64(up.goroutines-base.goroutines), "goroutines")
	b.ReportMetric(mib(closed.inuse, base.inuse), "MiB-inuse-closed")
	b.ReportMetric(mib(closed.sys, base.sys), "MiB-sys-closed")
	b.ReportMetric(float64(closed.goroutines-base.goroutines), "goroutines-closed")
}
