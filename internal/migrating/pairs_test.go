package migrating_test

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/backoff"
	"github.com/troupe-go/troupe/stages"
	"github.com/troupe-go/troupe/stages/breaker"
	"github.com/troupe-go/troupe/stages/hedge"
	"github.com/troupe-go/troupe/stages/loadshed"
	"github.com/troupe-go/troupe/stages/ratelimit"
	"github.com/troupe-go/troupe/troupehttp"
)

// The troupe side of each pair in docs/migrating.md, verbatim.

func failsafeStyle(h troupe.Host, fetch troupe.Service[string, string]) (*troupe.Stack[string, string], error) {
	bo, err := backoff.New(10*time.Millisecond, time.Second) // exponential, 2x, no jitter
	if err != nil {
		return nil, err
	}
	return stages.Stack[string, string]().
		Fallback(func(context.Context, string, error) (string, error) { return "cached", nil }).
		Retry(2, bo). // failsafe-go's default: 3 attempts
		Timeout(time.Second).
		Breaker(
			// Open after 5 failures in a row, for a minute, then 1 trial call.
			breaker.CountWindow(5), breaker.MinCalls(5), breaker.FailureRate(1),
			breaker.OpenDelay(time.Minute), breaker.HalfOpenTrials(1),
		).
		LoadShed(loadshed.Capacity(1)). // a bulkhead: one may wait, the rest are shed
		Limit(10).
		Build(h, fetch)
}

func gobreakerStyle(h troupe.Host, fetch troupe.Service[string, []byte]) (*troupe.Stack[string, []byte], error) {
	return stages.Stack[string, []byte]().
		Breaker(
			// ReadyToTrip: more than 5 failures in a row.
			breaker.CountWindow(6), breaker.MinCalls(6), breaker.FailureRate(1),
			breaker.OpenDelay(60*time.Second), // Timeout
			breaker.HalfOpenTrials(1),         // MaxRequests
			breaker.Classify(func(_ []byte, err error) bool { // IsSuccessful, inverted
				return err != nil && !errors.Is(err, errNotFound)
			}),
			breaker.OnStateChange(func(from, to breaker.State) { logChange("fetch", from, to) }),
		).
		Build(h, fetch)
}

func rateStyle(h troupe.Host, api troupe.Service[string, string]) (*troupe.Stack[string, string], error) {
	// rate.NewLimiter(10, 5): 10 a second, bursts of 5 after a quiet spell.
	return stages.Stack[string, string]().
		RateLimit(ratelimit.Rate{Num: 10, Per: time.Second}, ratelimit.Smooth(5)).
		Build(h, api)
}

func retryablehttpStyle(h troupe.Host) (*http.Client, error) {
	bo, err := backoff.New(time.Second, 30*time.Second) // doubling, no jitter, as DefaultBackoff
	if err != nil {
		return nil, err
	}
	stack, err := stages.Stack[*http.Request, *http.Response]().
		Layer(troupehttp.Retry(4, bo)). // RetryMax 4, RetryWaitMin 1 s, RetryWaitMax 30 s
		Build(h, troupehttp.Send(http.DefaultTransport))
	if err != nil {
		return nil, err
	}
	return &http.Client{Transport: troupehttp.Transport(stack)}, nil
}

func hedgeStyle(h troupe.Host, lookup troupe.Service[string, string]) (*troupe.Stack[string, string], error) {
	return stages.Stack[string, string]().
		Hedge(hedge.Delay(50*time.Millisecond), hedge.MaxHedges(2)).
		Build(h, lookup)
}
