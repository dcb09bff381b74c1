package adaptive_test

import (
	"context"
	"fmt"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/stages"
	"github.com/troupe-go/troupe/stages/adaptive"
)

func Example() {
	sys := actors.NewSystem()
	defer sys.Shutdown(context.Background())
	double := actors.Func(func(_ context.Context, v int) (int, error) { return 2 * v, nil })

	stack, err := stages.Stack[int, int]().
		Adaptive(adaptive.Limits(2, 50), adaptive.Initial(10), adaptive.OnLimitChange(func(old, new int) {
			fmt.Printf("limit %d -> %d\n", old, new)
		})).
		Build(sys, double)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer stack.Close(context.Background())

	// The first window (10 calls) measures the latency at the min limit;
	// then the limit moves to the initial one.
	var out int
	for i := range 11 {
		if out, err = troupe.Do(context.Background(), stack, i); err != nil {
			fmt.Println(err)
			return
		}
	}
	st, _ := stack.Stats("adaptive")
	snap := st.Detail.(adaptive.Snapshot)
	fmt.Println(out, snap.Limit, snap.InFlight, st.Capacity)
	// Output:
	// limit 2 -> 10
	// 20 10 0 50
}
