package troupe_test

import (
	"context"
	"fmt"
	"strconv"
	"sync/atomic"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/stages"
)

// A layer of your own goes into a stack like any stage: stages.Stack's
// Layer takes it.
func ExampleLayerFunc() {
	ctx := context.Background()
	fetch := func(_ context.Context, id int) (string, error) { return "item " + strconv.Itoa(id), nil }

	sys := actors.NewSystem() // quiet; actors.WithLogger(l) to see protoactor's logs
	defer sys.Shutdown(ctx)

	api := actors.Func(func(ctx context.Context, id int) (string, error) {
		return fetch(ctx, id) // runs on the caller's goroutine; may block; honours ctx
	})
	// A layer of your own: here, one that counts the reservations.
	var reserved atomic.Int64
	counting := troupe.LayerFunc[int, string](func(_ troupe.Host, inner troupe.Service[int, string]) (troupe.Service[int, string], error) {
		return countingService{inner: inner, n: &reserved}, nil
	})
	svc, err := stages.Stack[int, string]().
		Limit(2).
		Layer(counting).
		Build(sys, api)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer svc.Close(ctx)

	out, err := troupe.Do(ctx, svc, 42) // reserve + call in one line
	fmt.Println(out, err)
	p, err := svc.Reserve(ctx) // or: wait for readiness...
	if err != nil {
		fmt.Println(err)
		return
	}
	out, err = p.Call(ctx, 43) // ...and call with the permit, exactly once
	fmt.Println(out, err)
	_, err = p.Call(ctx, 44)
	fmt.Println(err)
	fmt.Println(reserved.Load(), "reservations")
	// Output:
	// item 42 <nil>
	// item 43 <nil>
	// troupe: permit already used or released
	// 2 reservations
}

// countingService counts the reservations made through it.
type countingService struct {
	inner troupe.Service[int, string]
	n     *atomic.Int64
}

func (c countingService) Reserve(ctx context.Context) (*troupe.Permit[int, string], error) {
	c.n.Add(1)
	return c.inner.Reserve(ctx)
}
