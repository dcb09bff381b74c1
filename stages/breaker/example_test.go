package breaker_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/stages"
	"github.com/troupe-go/troupe/stages/breaker"
)

// A breaker over a service that has gone down: once 5 calls are in and at
// least half of them failed, it opens, and the calls after that are
// refused at once without reaching the service.
func Example() {
	ctx := context.Background()
	sys := actors.NewSystem()
	defer sys.Shutdown(ctx)

	reached := 0
	down := actors.Func(func(context.Context, string) (string, error) {
		reached++ // the calls below are made one after the other
		return "", errors.New("503 Service Unavailable")
	})
	svc, err := stages.Stack[string, string]().
		Breaker(
			breaker.CountWindow(10), breaker.MinCalls(5), breaker.FailureRate(0.5),
			breaker.OpenDelay(30*time.Second),
			breaker.OnStateChange(func(from, to breaker.State) { fmt.Println("breaker:", from, "->", to) }),
		).
		Build(sys, down)
	if err != nil {
		fmt.Println(err)
		return
	}
	for i := range 7 {
		_, err := troupe.Do(ctx, svc, fmt.Sprint("order-", i))
		var refused *breaker.OpenError
		if errors.As(err, &refused) {
			fmt.Printf("call %d refused, try again in %v\n", i, refused.RetryAfter(time.Now()).Round(time.Second))
		} else {
			fmt.Printf("call %d failed: %v\n", i, err)
		}
	}
	fmt.Println("calls that reached the service:", reached)
	// Output:
	// call 0 failed: 503 Service Unavailable
	// call 1 failed: 503 Service Unavailable
	// call 2 failed: 503 Service Unavailable
	// call 3 failed: 503 Service Unavailable
	// breaker: closed -> open
	// call 4 failed: 503 Service Unavailable
	// call 5 refused, try again in 30s
	// call 6 refused, try again in 30s
	// calls that reached the service: 5
}
