package bench

import (
	"testing"

	"github.com/troupe-go/troupe/stages"
)

// buffersVariant is a concurrency limit over three Buffers: the stack with
// the least work per stage, so what is left is the runtime's cost per hop
// (the mailbox, the reservation, the actor's ownership).
func buffersVariant() variant {
	return troupeOf("troupe-buffers", stages.Stack[int, int]().Limit(stdStack.limit).Buffer(64).Buffer(64).Buffer(64))
}

// BenchmarkBuffers is limit + 3 Buffers beside the channel chain (four
// goroutines joined by channels) and the 4-stage stack, in the same run:
// the runtime's cost per hop, one caller (seq) and 64 (par64).
func BenchmarkBuffers(b *testing.B) {
	for _, mode := range []struct {
		name    string
		callers int
	}{{"seq", 1}, {"par64", 64}} {
		b.Run(mode.name, func(b *testing.B) {
			for _, v := range []variant{chanchainVariant(stdStack, false), buffersVariant(), troupeVariant(stdStack)} {
				b.Run(v.name, func(b *testing.B) {
					newCaller, stop := v.build(b, noop)
					defer stop()
					runCallers(b, mode.callers, newCaller)
				})
			}
		})
	}
}
