package hedge_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/stages/hedge"
)

func ExampleNew() {
	ctx := context.Background()
	sys := actors.NewSystem()
	defer sys.Shutdown(ctx)

	// A replicated backend whose first answer straggles: it comes only when
	// the call is cancelled. The hedge sent 20 ms later answers at once.
	var calls atomic.Int32
	backend := actors.Func(func(ctx context.Context, id int) (string, error) {
		if calls.Add(1) == 1 {
			<-ctx.Done()
			return "", ctx.Err()
		}
		return fmt.Sprintf("item %d", id), nil
	})
	h, err := hedge.New(sys, backend, hedge.Delay(20*time.Millisecond), hedge.NoBudget())
	if err != nil {
		fmt.Println(err)
		return
	}
	out, err := troupe.Do[int, string](ctx, h, 7)
	c := h.Counts()
	fmt.Println(out, err, "after", calls.Load(), "calls;", c.Hedges, "hedge sent,", c.Won, "won")
	// Output: item 7 <nil> after 2 calls; 1 hedge sent, 1 won
}
