package retry_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/backoff"
	"github.com/troupe-go/troupe/stages/retry"
)

func ExampleNew() {
	ctx := context.Background()
	sys := actors.NewSystem()
	defer sys.Shutdown(ctx)

	calls := 0
	flaky := actors.Func(func(_ context.Context, id int) (string, error) {
		calls++ // one caller here; a real function must be safe for concurrent use
		if calls < 3 {
			return "", errors.New("503 Service Unavailable")
		}
		return fmt.Sprintf("item %d", id), nil
	})
	bo, _ := backoff.New(time.Millisecond, 10*time.Millisecond)
	r, _ := retry.New(sys, flaky, retry.Attempts[int, string]{Max: 3, Backoff: bo})

	out, err := troupe.Do[int, string](ctx, r, 7)
	fmt.Println(out, err, "after", calls, "attempts")
	// Output: item 7 <nil> after 3 attempts
}
