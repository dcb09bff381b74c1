package bench

import (
	"context"
	"testing"

	"github.com/troupe-go/troupe/stages"
)

// withSemaphore is next behind a concurrency limit of n: a buffered channel
// of n slots taken before the call and given back after it, on the
// caller's goroutine (the least a concurrency limit can cost).
func withSemaphore(n int, next callFn) callFn {
	sem := make(chan struct{}, n)
	return func(ctx context.Context, v int) (int, error) {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			return 0, ctx.Err()
		}
		defer func() { <-sem }()
		return next(ctx, v)
	}
}

// semaphoreVariant is withSemaphore(n) around the downstream.
func semaphoreVariant(n int) variant {
	return variant{"semaphore", func(_ *testing.B, down callFn) (func() callFn, func()) {
		return shared(withSemaphore(n, down)), func() {}
	}}
}

// BenchmarkLimit is one concurrency limit of 20 over a no-op downstream:
// troupe's limit stage (troupe.Do through it) beside a buffered-channel
// semaphore around the call, one caller (seq) and 64 (par64).
func BenchmarkLimit(b *testing.B) {
	for _, mode := range callerModes {
		b.Run(mode.name, func(b *testing.B) {
			for _, v := range []variant{
				semaphoreVariant(stdStack.limit),
				troupeOf("troupe-limit", stages.Stack[int, int]().Limit(stdStack.limit)),
			} {
				b.Run(v.name, func(b *testing.B) {
					newCaller, stop := v.build(b, noop)
					defer stop()
					runCallers(b, mode.callers, newCaller)
				})
			}
		})
	}
}
