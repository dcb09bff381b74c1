package retry_test

import (
	"context"

	"github.com/troupe-go/troupe"
)

type result struct {
	v   string
	err error
}

func call[Req any](ctx context.Context, s troupe.Service[Req, string], v Req) <-chan result {
	ch := make(chan result, 1)
	go func() {
		out, err := troupe.Do(ctx, s, v)
		ch <- result{out, err}
	}()
	return ch
}

func callWith[Req any](ctx context.Context, p *troupe.Permit[Req, string], v Req) <-chan result {
	ch := make(chan result, 1)
	go func() {
		out, err := p.Call(ctx, v)
		ch <- result{out, err}
	}()
	return ch
}
