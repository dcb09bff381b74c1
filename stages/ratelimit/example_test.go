package ratelimit_test

import (
	"context"
	"fmt"
	"time"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/stages/ratelimit"
)

func ExampleNew() {
	sys := actors.NewSystem()
	defer sys.Shutdown(context.Background())
	echo := actors.Func(func(_ context.Context, s string) (string, error) { return s, nil })
	rl, err := ratelimit.New[string, string](sys, echo, ratelimit.Rate{Num: 2, Per: time.Hour})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	for _, s := range []string{"a", "b"} {
		out, err := troupe.Do[string, string](ctx, rl, s)
		fmt.Println(out, err)
	}
	// The second call spent the window's last unit: a third caller would
	// wait for the next window, an hour away.
	fmt.Println("limited:", rl.Limited(), "remaining:", rl.Snapshot().Remaining)

	_, err = ratelimit.New[string, string](sys, echo, ratelimit.Rate{Num: 0, Per: time.Second})
	fmt.Println(err)
	// Output:
	// a <nil>
	// b <nil>
	// limited: true remaining: 0
	// troupe: ratelimit: bad Rate 0 per 1s: need a number of requests and a period, both above zero
}
