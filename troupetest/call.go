package troupetest

import (
	"context"
	"time"

	"github.com/troupe-go/troupe"
)

// Result is the outcome of a call made with Go.
//
// A plain value, safe for concurrent use.
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

// Timed is the outcome of a call made with GoTimed, and how long it took
// from GoTimed to the outcome (exact inside a synctest bubble).
//
// A plain value, safe for concurrent use.
type Timed[Res any] struct {
	Value Res
	Err   error
	Took  time.Duration
}

// GoTimed is Go, timed.
func GoTimed[Req, Res any](ctx context.Context, svc troupe.Service[Req, Res], req Req) <-chan Timed[Res] {
	ch := make(chan Timed[Res], 1)
	start := time.Now()
	go func() {
		v, err := troupe.Do(ctx, svc, req)
		ch <- Timed[Res]{v, err, time.Since(start)}
	}()
	return ch
}
