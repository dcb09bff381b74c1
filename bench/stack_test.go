package bench

import "testing"

// stackVariants are the peers of the stack benchmark, in table order.
func stackVariants(c stackConfig) []variant {
	return []variant{
		directVariant(),
		funcstackVariant(c),
		failsafeVariant(c),
		chanchainVariant(c, false),
		protoactorVariant(c),
		troupeVariant(c),
	}
}

// BenchmarkStack is the stack (limit 20 -> timeout 10 s -> retry up
// to 3 -> rate limit 1e9/s) over a no-op downstream, built six ways, run by
// one caller (seq) and by a fixed pool of 64 caller goroutines (par64).
func BenchmarkStack(b *testing.B) {
	for _, mode := range []struct {
		name    string
		callers int
	}{{"seq", 1}, {"par64", 64}} {
		b.Run(mode.name, func(b *testing.B) {
			for _, v := range stackVariants(stdStack) {
				b.Run(v.name, func(b *testing.B) {
					newCaller, stop := v.build(b, noop)
					defer stop()
					runCallers(b, mode.callers, newCaller)
				})
			}
		})
	}
}
