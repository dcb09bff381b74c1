package balance_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/stages"
	"github.com/troupe-go/troupe/stages/balance"
	"github.com/troupe-go/troupe/supervisor"
)

// Three replicas found by a resolver, each its own supervised pipeline
// with a limit of its own; one of them fails every call. A Retry outside
// the balancer sends each retry to another replica.
func Example() {
	ctx := context.Background()
	sys := actors.NewSystem()
	defer sys.Shutdown(ctx)

	resolve := func(context.Context) ([]string, error) { return []string{"a", "b", "c"}, nil }
	replica := func(name string) supervisor.Build[int, string] {
		leaf := actors.Func(func(_ context.Context, id int) (string, error) {
			if name == "c" {
				return "", errors.New("c is down")
			}
			return fmt.Sprintf("item %d", id), nil
		})
		return func(h troupe.Host) (troupe.Service[int, string], error) {
			return stages.Stack[int, string]().Limit(10).Build(h, leaf)
		}
	}
	bal, err := balance.New(balance.Poll(30*time.Second, resolve, balance.Pipelines(sys, replica)))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer bal.Close(ctx)
	svc, err := stages.Stack[int, string]().Retry(2, nil).Build(sys, bal)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer svc.Close(ctx)

	failed := 0
	for id := range 100 {
		if _, err := troupe.Do(ctx, svc, id); err != nil {
			failed++
		}
	}
	out, err := troupe.Do(ctx, svc, 7)
	fmt.Println(out, err)
	fmt.Println("100 calls,", failed, "failed")
	// Output:
	// item 7 <nil>
	// 100 calls, 0 failed
}
