package troupe_test

import (
	"context"
	"fmt"
	"strconv"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/stages/buffer"
)

// The README's quick start.
func ExampleBuilder() {
	ctx := context.Background()
	sys := actors.NewSystem()
	defer sys.Shutdown(ctx)

	api := actors.Func(func(ctx context.Context, id int) (string, error) {
		return "item " + strconv.Itoa(id), nil // runs on the caller's goroutine
	})
	svc, err := troupe.NewBuilder[int, string]().
		Layer(buffer.Layer[int, string](64)). // first layer added = outermost
		Build(sys, api)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer svc.Close(ctx)

	out, err := troupe.Do(ctx, svc, 42) // reserve + call in one line
	fmt.Println(out, err)

	p, err := svc.Reserve(ctx) // or separately: wait for readiness...
	if err != nil {
		fmt.Println(err)
		return
	}
	out, err = p.Call(ctx, 43) // ...and call with the permit, exactly once
	fmt.Println(out, err)
	_, err = p.Call(ctx, 44)
	fmt.Println(err)
	// Output:
	// item 42 <nil>
	// item 43 <nil>
	// troupe: permit already used or released
}
