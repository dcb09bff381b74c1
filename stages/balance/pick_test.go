package balance_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/stages/balance"
	"github.com/troupe-go/troupe/stages/limit"
	"github.com/troupe-go/troupe/troupetest"
)

// The pick goes to the less loaded of the two drawn: an endpoint with
// calls in flight loses every pair to an idle one, under either load.
//
// spec: BAL1
func TestThePickGoesToTheLessLoadedOfTheTwoDrawn(t *testing.T) {
	for name, load := range map[string]balance.Setting{"pending": balance.PendingRequests(), "peak-ewma": balance.PeakEWMA(balance.DefaultDecay, balance.DefaultRTT)} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var a, b, c counted
				bal := newBalancer(t, map[string]troupe.Service[int, int]{"a": a.svc()}, load)
				ctx := context.Background()
				var busy []*troupe.Permit[int, int]
				for range 3 { // a alone: three calls in flight on it
					p, err := bal.Reserve(ctx)
					require.NoError(t, err)
					busy = append(busy, p)
				}
				require.True(t, bal.Insert("b", b.svc()))
				require.True(t, bal.Insert("c", c.svc()))
				synctest.Wait()
				for range 300 {
					p, err := bal.Reserve(ctx)
					require.NoError(t, err)
					require.NoError(t, p.Release())
				}
				s := stats(bal)
				assert.Equal(t, uint64(3), s["a"].Picks, "a, loaded, is in two pairs of three and loses both")
				assert.Equal(t, 3, s["a"].Pending)
				assert.Greater(t, s["b"].Picks, uint64(50))
				assert.Greater(t, s["c"].Picks, uint64(50))
				assert.Equal(t, uint64(300), s["b"].Picks+s["c"].Picks)
				for _, p := range busy {
					require.NoError(t, p.Release())
				}
				assert.Zero(t, stats(bal)["a"].Pending)
			})
		})
	}
}

// An endpoint whose limit is full is not ready and not picked; with no
// endpoint ready Reserve waits, and wakes when the first is ready again.
//
// spec: BAL1, BAL3
func TestAnEndpointWhoseLimitIsFullIsNotPicked(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sys := troupetest.NewSystem(t)
		gates := map[string]*blocking{"a": newBlocking(), "b": newBlocking()}
		eps := map[string]troupe.Service[int, int]{}
		for k, g := range gates {
			l, err := limit.New(sys, g.svc(), 1)
			require.NoError(t, err)
			eps[k] = l
		}
		bal := newBalancer(t, eps)
		ctx := context.Background()
		first := troupetest.Go[int, int](ctx, bal, 1)
		synctest.Wait()
		busy := "a"
		if gates["b"].calls.Load() == 1 {
			busy = "b"
		}
		other := map[string]string{"a": "b", "b": "a"}[busy]
		s := stats(bal)
		assert.False(t, s[busy].Ready, "its limit is full")
		assert.True(t, s[other].Ready)

		second := troupetest.Go[int, int](ctx, bal, 2)
		synctest.Wait()
		assert.Equal(t, int64(1), gates[other].calls.Load(), "the second call went to the other")
		assert.Equal(t, int64(1), gates[busy].calls.Load())

		third := troupetest.Go[int, int](ctx, bal, 3)
		synctest.Wait()
		select {
		case r := <-third:
			t.Fatalf("the third call did not wait: %v", r)
		default:
		}
		gates[busy].release <- struct{}{}
		assert.NoError(t, (<-first).Err)
		synctest.Wait()
		assert.Equal(t, int64(2), gates[busy].calls.Load(), "the first endpoint ready again took the waiting call")
		close(gates["a"].release)
		close(gates["b"].release)
		assert.NoError(t, (<-second).Err)
		assert.NoError(t, (<-third).Err)
	})
}

// With no endpoint ready, Reserve waits until its context ends and then
// fails with an error matching both ErrNoneReady and the context's error;
// an endpoint inserted meanwhile wakes it.
//
// spec: BAL1
func TestReserveWaitsForTheFirstReadyEndpointAndHonoursItsContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		bal := newBalancer(t, nil)
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		start := time.Now()
		_, err := bal.Reserve(ctx)
		assert.ErrorIs(t, err, balance.ErrNoneReady)
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		assert.Equal(t, time.Second, time.Since(start))

		got := troupetest.Go[int, int](context.Background(), bal, 7)
		synctest.Wait()
		var c counted
		require.True(t, bal.Insert("late", c.svc()))
		r := <-got
		require.NoError(t, r.Err)
		assert.Equal(t, 7, r.Value)
		assert.Equal(t, int64(1), c.calls.Load())
	})
}

// Close answers the Reserves still waiting with an error matching
// troupe.ErrClosed, and every Reserve after it.
//
// spec: BAL1
func TestCloseAnswersTheWaitingReserves(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		bal, err := balance.New[string, int, int](nil)
		require.NoError(t, err)
		got := troupetest.Go[int, int](context.Background(), bal, 1)
		synctest.Wait()
		require.NoError(t, bal.Close(context.Background()))
		assert.ErrorIs(t, (<-got).Err, troupe.ErrClosed)
		_, err = bal.Reserve(context.Background())
		assert.ErrorIs(t, err, troupe.ErrClosed)
		var c counted
		assert.False(t, bal.Insert("a", c.svc()), "a closed balancer takes no endpoint")
		assert.NoError(t, bal.Close(context.Background()))
	})
}
