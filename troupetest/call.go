package troupetest

import (
	"context"

	"github.com/troupe-go/troupe"
)

// Result is the outcome of a call made with Go.
type Result[Res any] struct {
	Value Res
	Err   error
}

// Go reserves on svc and calls it with req on a goroutine of its own, and
// delivers the outcome on the returned channel, which has room for it: the
// goroutine never waits for the test to read it.
func Go[Req, Res any](ctx context.Context, svc troupe.Service[Req, Res], req Req) <-chan Result[Res] {
	ch := make(chan Result[Res], 1)
	go func() {
		v, err := troupe.Do(ctx, svc, req)
		ch <- Result[Res]{v, err}
	}()
	return ch
}

// GoWith calls with a permit already reserved, like Go.
func GoWith[Req, Res any](ctx context.Context, p *troupe.Permit[Req, Res], req Req) <-chan Result[Res] {
	ch := make(chan Result[Res], 1)
	go func() {
		v, err := p.Call(ctx, req)
		ch <- Result[Res]{v, err}
	}()
	return ch
}
