package bench

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
)

// counter is an observer that counts events by type: the cheapest useful
// observer, allocation-free.
type counter struct{ n [16]atomic.Int64 }

func (c *counter) Observe(ev troupe.Event) { c.n[ev.Type&15].Add(1) }

// observedVariant is the troupe variant with a counting observer attached
// to the stack.
func observedVariant(c stackConfig) variant {
	return variant{"troupe-observed", func(b *testing.B, down callFn) (func() callFn, func()) {
		sys := actors.NewSystem()
		st, err := troupeBuilder(c).Observe(&counter{}, "bench").Build(sys, actors.Func(down))
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

// BenchmarkObserve is the Stack benchmark's troupe variant without and
// with an observer (a counter of events by type) in the same run: what an
// observer costs on the 4-stage stack, one caller (seq) and 64 (par64).
func BenchmarkObserve(b *testing.B) {
	for _, mode := range []struct {
		name    string
		callers int
	}{{"seq", 1}, {"par64", 64}} {
		b.Run(mode.name, func(b *testing.B) {
			for _, v := range []variant{troupeVariant(stdStack), observedVariant(stdStack)} {
				b.Run(v.name, func(b *testing.B) {
					newCaller, stop := v.build(b, noop)
					defer stop()
					runCallers(b, mode.callers, newCaller)
				})
			}
		})
	}
}
