package stagekit_test

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/actors/stagekit"
)

// Counter is a stage of our own: it counts the requests it forwards. Its
// type embeds a Handle, so users see Reserve, ReserveAndCall, Close, Name
// and Stats, and Count.
type Counter[Req, Res any] struct {
	stagekit.Handle[Req, Res]
	b *counting[Req, Res]
}

// Count returns how many requests the stage forwarded.
func (c *Counter[Req, Res]) Count() int64 { return c.b.n.Load() }

// counting is the behavior: Request runs on the stage's actor.
type counting[Req, Res any] struct {
	stagekit.Passthrough[Req, Res]
	n atomic.Int64 // written on the actor, read anywhere
}

// Detail makes the count the Detail of the stage's Stats (Detailer); it
// may run on any goroutine.
func (b *counting[Req, Res]) Detail() any { return b.n.Load() }

func (b *counting[Req, Res]) Request(s *stagekit.Stage[Req, Res], e *stagekit.Envelope[Req, Res]) {
	b.n.Add(1)
	s.Forward(e)
}

// NewCounter spawns a Counter over inner in host h.
func NewCounter[Req, Res any](h troupe.Host, inner troupe.Service[Req, Res]) (*Counter[Req, Res], error) {
	b := &counting[Req, Res]{}
	st, err := stagekit.Spawn(h, stagekit.Config{Name: "counter"}, inner, b)
	if err != nil {
		return nil, fmt.Errorf("counter: %w", err)
	}
	return &Counter[Req, Res]{Handle: stagekit.NewHandle(st, nil), b: b}, nil
}

// A stage written from this package's documentation.
func ExampleSpawn() {
	ctx := context.Background()
	sys := actors.NewSystem()
	defer sys.Shutdown(ctx)
	api := actors.Func(func(_ context.Context, v int) (int, error) { return v * 2, nil })
	c, err := NewCounter(sys, api)
	if err != nil {
		fmt.Println(err)
		return
	}
	for v := range 3 {
		out, err := troupe.Do(ctx, c, v)
		fmt.Println(out, err)
	}
	fmt.Println(c.Name(), "forwarded", c.Count())
	fmt.Println("stats detail:", c.Stats().Detail)
	fmt.Println(c.Close(ctx))
	// Output:
	// 0 <nil>
	// 2 <nil>
	// 4 <nil>
	// counter forwarded 3
	// stats detail: 3
	// <nil>
}
