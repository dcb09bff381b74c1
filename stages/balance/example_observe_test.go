package balance_test

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/stages/balance"
)

// An observer attached to a balancer is told of each endpoint added and
// removed, and of each pick, with the endpoint's key; Stats gives each
// endpoint's count of picks too.
func ExampleObserve() {
	ctx := context.Background()
	var picks, drained atomic.Int64
	obs := troupe.ObserverFunc(func(ev troupe.Event) {
		switch ev.Type {
		case troupe.EventPicked:
			picks.Add(1)
		case troupe.EventEndpointDrained:
			drained.Add(1) // on a goroutine of the balancer's
		default:
			fmt.Println(ev.Pipeline, ev.Type, ev.Endpoint)
		}
	})
	bal, err := balance.New[string, int, int](nil, balance.Observe(obs, "replicas"))
	if err != nil {
		fmt.Println(err)
		return
	}
	echo := actors.Func(func(_ context.Context, v int) (int, error) { return v, nil })
	bal.Insert("10.0.0.1:80", echo)
	bal.Insert("10.0.0.2:80", echo)
	for i := range 10 {
		_, _ = troupe.Do[int, int](ctx, bal, i)
	}
	var total uint64
	for _, s := range bal.Stats() {
		total += s.Picks
	}
	bal.Remove("10.0.0.1:80")
	_ = bal.Close(ctx) // removes the other, and waits for the drains
	fmt.Println(picks.Load(), "picks reported,", total, "in the stats;", drained.Load(), "endpoints drained")
	// Output:
	// replicas endpoint_added 10.0.0.1:80
	// replicas endpoint_added 10.0.0.2:80
	// replicas endpoint_removed 10.0.0.1:80
	// replicas endpoint_removed 10.0.0.2:80
	// 10 picks reported, 10 in the stats; 2 endpoints drained
}
