package stages_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/backoff"
	"github.com/troupe-go/troupe/stages"
	"github.com/troupe-go/troupe/stages/ratelimit"
)

// The README's quick start: Req and Res are named once.
//
// spec: API1
func ExampleStack() {
	ctx := context.Background()
	fetch := func(_ context.Context, id int) (string, error) { return "item " + strconv.Itoa(id), nil }
	bo, _ := backoff.New(200*time.Millisecond, 2*time.Second)

	sys := actors.NewSystem() // quiet; actors.WithLogger(l) to see protoactor's logs
	defer sys.Shutdown(ctx)

	api := actors.Func(func(ctx context.Context, id int) (string, error) {
		return fetch(ctx, id) // runs on the caller's goroutine; may block; honours ctx
	})
	svc, err := stages.Stack[int, string]().
		Limit(20). // outermost
		Timeout(10*time.Second).
		Retry(3, bo).
		RateLimit(ratelimit.Rate{Num: 5, Per: time.Second}). // innermost
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
	for _, s := range svc.Stages() {
		fmt.Print(s.Name, " ")
	}
	fmt.Println()
	// Output:
	// item 42 <nil>
	// item 43 <nil>
	// troupe: permit already used or released
	// limit timeout retry ratelimit
}

// tally is an observer that counts events by stage, type and outcome. It
// is called on many goroutines at once: it locks.
type tally struct {
	mu sync.Mutex
	n  map[string]int // guarded by mu
}

func (t *tally) Observe(ev troupe.Event) {
	key := ev.Pipeline + " " + ev.Stage + " " + ev.Type.String()
	if ev.Type == troupe.EventFinished {
		key += " " + ev.Outcome.String()
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.n[key]++
}

// An observer sees every stage of the stack: what each accepted and
// finished, and the retry's retries.
func ExampleBuilder_Observe() {
	ctx := context.Background()
	sys := actors.NewSystem()
	defer sys.Shutdown(ctx)

	calls := 0
	api := actors.Func(func(context.Context, int) (string, error) {
		if calls++; calls == 1 {
			return "", errors.New("flaky")
		}
		return "ok", nil
	})
	counts := &tally{n: map[string]int{}}
	svc, err := stages.Stack[int, string]().
		Observe(counts, "ocr-api").
		Timeout(10*time.Second).
		Retry(3, nil).
		Build(sys, api)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer svc.Close(ctx)

	out, err := troupe.Do(ctx, svc, 1)
	fmt.Println(out, err)
	counts.mu.Lock()
	defer counts.mu.Unlock()
	for _, k := range slices.Sorted(maps.Keys(counts.n)) {
		fmt.Println(k, counts.n[k])
	}
	// Output:
	// ok <nil>
	// ocr-api retry accepted 1
	// ocr-api retry finished success 1
	// ocr-api retry retried 1
	// ocr-api retry started 2
	// ocr-api timeout accepted 1
	// ocr-api timeout finished success 1
}
