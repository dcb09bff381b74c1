package balance_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/stages"
	"github.com/troupe-go/troupe/stages/balance"
	"github.com/troupe-go/troupe/stages/breaker"
	"github.com/troupe-go/troupe/stages/hedge"
	"github.com/troupe-go/troupe/troupetest"
)

// An endpoint whose breaker is open is not picked until the open delay
// ends; then its trial call goes and, the endpoint healthy again, it is
// picked as before.
//
// spec: BAL3
func TestAnEndpointWhoseBreakerIsOpenComesBackAfterTheOpenDelay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sys := troupetest.NewSystem(t)
		var a, b counted
		ba, err := breaker.New(sys, a.svc(), breaker.ConsecutiveFailures(1), breaker.OpenDelay(5*time.Second))
		require.NoError(t, err)
		bb, err := breaker.New(sys, b.svc(), breaker.ConsecutiveFailures(1), breaker.OpenDelay(5*time.Second))
		require.NoError(t, err)
		bal := newBalancer(t, map[string]troupe.Service[int, int]{"a": ba, "b": bb}, balance.PendingRequests())
		ctx := context.Background()
		a.fail.Store(true)
		for a.calls.Load() == 0 {
			_, err := troupe.Do[int, int](ctx, bal, 1)
			require.True(t, err == nil || errors.Is(err, errDown), "%v", err)
		}
		require.Equal(t, breaker.Open, ba.State())
		retryAt := ba.Snapshot().RetryAt
		time.Sleep(balance.DefaultCooldown) // a's failure no longer keeps it out of pairs

		var refused int
		for range 100 {
			_, err := troupe.Do[int, int](ctx, bal, 1)
			if err != nil {
				require.ErrorIs(t, err, breaker.ErrOpen)
				refused++
			}
		}
		assert.Equal(t, 1, refused, "one call meets the open breaker, then a is not ready")
		s := stats(bal)["a"]
		assert.False(t, s.Ready)
		assert.True(t, s.Paused)
		assert.Equal(t, retryAt, s.PausedUntil, "until the breaker lets trial calls through")
		assert.Equal(t, int64(1), a.calls.Load())

		a.fail.Store(false)
		time.Sleep(time.Until(retryAt))
		synctest.Wait()
		assert.True(t, stats(bal)["a"].Ready, "back when the open delay ends")
		for range 100 {
			_, err := troupe.Do[int, int](ctx, bal, 1)
			require.NoError(t, err)
		}
		assert.Equal(t, breaker.Closed, ba.State(), "its trial call went, and closed it")
		assert.Greater(t, a.calls.Load(), int64(20))
	})
}

// With one endpoint of three failing every call, a Retry outside the
// balancer sends its retries to the others: under 1 % of the calls fail
// (here none), sequential or concurrent, and the failing endpoint is
// tried about once a cooldown.
//
// spec: BAL2, BAL3
func TestARetryOutsideSendsItsRetryToAnotherEndpoint(t *testing.T) {
	for _, callers := range []int{1, 8} {
		synctest.Test(t, func(t *testing.T) {
			failed, bad := retryOverOneFailing(t, callers)
			assert.Less(t, float64(failed)/retryCalls, 0.01)
			assert.Less(t, bad, int64(retryCalls/20), "tried once a cooldown, not a third of the time")
			assert.Positive(t, bad)
		})
	}
}

// Without the cooldown, the failing endpoint, fast to fail, looks the
// least loaded and draws the traffic: the cooldown is what keeps the
// retries away from it.
//
// spec: BAL3
func TestWithoutTheCooldownAFastFailingEndpointDrawsTheCalls(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, bad := retryOverOneFailing(t, 1, balance.FailureCooldown(0))
		assert.Greater(t, bad, int64(retryCalls/5))
	})
}

const retryCalls = 2000

// retryOverOneFailing makes retryCalls calls, from callers goroutines,
// through a Retry(2) over a balancer of three endpoints of which one
// fails every call, and returns how many calls failed and how many the
// failing endpoint got.
func retryOverOneFailing(t *testing.T, callers int, opts ...balance.Option[int]) (failed, bad int64) {
	sys := troupetest.NewSystem(t)
	eps := [3]counted{}
	eps[0].fail.Store(true)
	svcs := map[string]troupe.Service[int, int]{}
	for i, k := range []string{"bad", "ok1", "ok2"} {
		c := &eps[i]
		svcs[k] = actors.Func(func(ctx context.Context, v int) (int, error) {
			time.Sleep(time.Millisecond)
			c.calls.Add(1)
			if c.fail.Load() {
				return 0, errDown
			}
			return v, nil
		})
	}
	bal := newBalancer(t, svcs, opts...)
	svc, err := stages.Stack[int, int]().Retry(2, nil).Build(sys, bal)
	require.NoError(t, err)
	defer svc.Close(context.Background())
	var nfailed atomic.Int64
	var wg sync.WaitGroup
	for c := range callers {
		wg.Go(func() {
			for i := c; i < retryCalls; i += callers {
				if _, err := troupe.Do[int, int](context.Background(), svc, i); err != nil {
					nfailed.Add(1)
				}
			}
		})
	}
	wg.Wait()
	t.Logf("%d callers: %d failed of %d; the failing endpoint got %d calls", callers, nfailed.Load(), retryCalls, eps[0].calls.Load())
	return nfailed.Load(), eps[0].calls.Load()
}

// A hedge outside the balancer goes to another endpoint than the
// original, which still has it in flight.
//
// spec: BAL3
func TestAHedgeOutsideGoesToAnotherEndpoint(t *testing.T) {
	for seed := range uint64(10) {
		synctest.Test(t, func(t *testing.T) {
			sys := troupetest.NewSystem(t)
			var first atomic.Bool
			var mu sync.Mutex
			var who []string
			svcs := map[string]troupe.Service[int, int]{}
			for _, k := range []string{"a", "b", "c"} {
				svcs[k] = actors.Func(func(ctx context.Context, v int) (int, error) {
					mu.Lock()
					who = append(who, k)
					mu.Unlock()
					if first.CompareAndSwap(false, true) { // the original straggles
						<-ctx.Done()
						return 0, ctx.Err()
					}
					return v, nil
				})
			}
			bal, err := balance.New[string, int, int](nil, balance.WithSource(randSource(seed)))
			require.NoError(t, err)
			defer bal.Close(context.Background())
			for k, s := range svcs {
				bal.Insert(k, s)
			}
			svc, err := stages.Stack[int, int]().Hedge(hedge.Delay(10*time.Millisecond), hedge.NoBudget()).Build(sys, bal)
			require.NoError(t, err)
			defer svc.Close(context.Background())
			out, err := troupe.Do[int, int](context.Background(), svc, 5)
			require.NoError(t, err)
			assert.Equal(t, 5, out)
			synctest.Wait()
			mu.Lock()
			defer mu.Unlock()
			require.Len(t, who, 2)
			assert.NotEqual(t, who[0], who[1], "the hedge went to another endpoint")
		})
	}
}
