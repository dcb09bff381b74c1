package redisquota_test

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/redisquota"
	"github.com/troupe-go/troupe/stages"
	"github.com/troupe-go/troupe/stages/ratelimit"
)

// A stack whose rate limit and concurrency limit are shared by every
// process that names the same keys: 5 calls per second and 20 at once, in
// all. (It needs a Redis on localhost:6379, so it is compiled, not run.)
func Example() {
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: "localhost:6379", ContextTimeoutEnabled: true})
	defer rdb.Close()
	rate, err := redisquota.NewLimiter(rdb, "ocr-api", ratelimit.Rate{Num: 5, Per: time.Second},
		redisquota.OnUnavailable(redisquota.Fallback(4))) // 4 replicas: 1/4 each while Redis is away
	if err != nil {
		fmt.Println(err)
		return
	}
	budget, err := redisquota.NewBudget(rdb, "ocr-api", 20)
	if err != nil {
		fmt.Println(err)
		return
	}
	sys := actors.NewSystem()
	defer sys.Shutdown(ctx)
	api := actors.Func(func(_ context.Context, id int) (string, error) { return fmt.Sprint("text of ", id), nil })
	svc, err := stages.Stack[int, string]().
		Layer(redisquota.Layer[int, string](budget)). // 20 at once, across the fleet
		Timeout(10*time.Second).
		RateLimit(rate.Rate(), ratelimit.Remote(rate)). // 5 per second, across the fleet
		Build(sys, api)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer svc.Close(ctx)
	fmt.Println(troupe.Do(ctx, svc, 42))
}

// Without Redis, a constructor still checks its configuration.
func ExampleNewLimiter() {
	deaf := redis.NewClient(&redis.Options{Addr: "localhost:6379"}) // ContextTimeoutEnabled not set
	defer deaf.Close()
	_, err := redisquota.NewLimiter(deaf, "ocr-api", ratelimit.Rate{Num: 5, Per: time.Second})
	fmt.Println(err != nil)
	// Output: true
}
