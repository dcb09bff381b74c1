package hedge

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/troupetest"
)

var errFirst = errors.New("first attempt failed")

// Every way a session ends gives back its references, the one it holds on
// the request included, so that sessions are reused: a session that kept
// one would never go back to its pool, and a stage would make a session
// per request. Under the race detector sync.Pool drops a quarter of what
// it is given, hence a bound of half the requests rather than a handful.
//
// spec: H1
func TestH1_EveryEndOfASessionGivesItsReferencesBack(t *testing.T) {
	const ms, n = time.Millisecond, 100
	for _, c := range []struct {
		name string
		// attempt k (1: the original, 2: the hedge at 10 ms) of a request
		work func(ctx context.Context, k int32) (int, error)
		want func(t *testing.T, got troupetest.Result[int])
	}{
		{"the hedge wins, the original is cancelled", func(ctx context.Context, k int32) (int, error) {
			if k == 2 {
				return 2, nil
			}
			<-ctx.Done()
			return 0, ctx.Err()
		}, func(t *testing.T, got troupetest.Result[int]) { assert.Equal(t, 2, got.Value) }},
		{"the original wins before the delay", func(context.Context, int32) (int, error) {
			return 1, nil
		}, func(t *testing.T, got troupetest.Result[int]) { assert.Equal(t, 1, got.Value) }},
		{"the original wins after the hedge was sent", func(ctx context.Context, k int32) (int, error) {
			if k == 1 {
				time.Sleep(15 * ms)
				return 1, nil
			}
			<-ctx.Done()
			return 0, ctx.Err()
		}, func(t *testing.T, got troupetest.Result[int]) { assert.Equal(t, 1, got.Value) }},
		{"the original fails first, the hedge then wins", func(_ context.Context, k int32) (int, error) {
			if k == 1 {
				time.Sleep(15 * ms)
				return 0, errFirst
			}
			time.Sleep(20 * ms)
			return 2, nil
		}, func(t *testing.T, got troupetest.Result[int]) { assert.Equal(t, 2, got.Value) }},
		{"both fail, the last failure is the outcome", func(_ context.Context, k int32) (int, error) {
			if k == 1 {
				time.Sleep(15 * ms)
				return 0, errFirst
			}
			time.Sleep(20 * ms)
			return 0, troupe.ErrClosed
		}, func(t *testing.T, got troupetest.Result[int]) { assert.ErrorIs(t, got.Err, troupe.ErrClosed) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var attempts atomic.Int32
				fn := actors.Func(func(ctx context.Context, _ int) (int, error) {
					return c.work(ctx, attempts.Add(1))
				})
				x, err := New[int, int](troupetest.NewSystem(t), fn, Delay(10*ms), NoBudget())
				require.NoError(t, err)
				var made atomic.Int32
				mk := x.b.sessions.New
				x.b.sessions.New = func() any { made.Add(1); return mk() }
				for i := range n {
					attempts.Store(0)
					c.want(t, <-troupetest.Go(context.Background(), x, i))
					synctest.Wait() // the loser's outcome, if any, has come back
				}
				assert.Less(t, int(made.Load()), n/2, "sessions made for %d requests", n)
				assert.Equal(t, 0, x.Counts().Sessions)
				require.NoError(t, x.Close(context.Background()))
			})
		})
	}
}

// A hedge sent after the original's outcome came (a failure, while an
// earlier hedge still runs) runs as any other: the frames the original
// passed are done, and the runtime must not take that for the caller's
// outcome having come.
//
// spec: H1
func TestH1_AHedgeSentAfterTheOriginalFailedStillRuns(t *testing.T) {
	const ms = time.Millisecond
	synctest.Test(t, func(t *testing.T) {
		var attempts atomic.Int32
		fn := actors.Func(func(ctx context.Context, _ int) (int, error) {
			switch attempts.Add(1) {
			case 1: // the original, at 0
				time.Sleep(15 * ms)
				return 0, errFirst
			case 2: // the first hedge, at 10 ms: the loser, cancelled at 20 ms
				select {
				case <-time.After(100 * ms):
					return 0, errFirst
				case <-ctx.Done():
					return 0, ctx.Err()
				}
			}
			return 3, nil // the second hedge, at 20 ms
		})
		x, err := New[int, int](troupetest.NewSystem(t), fn, Delay(10*ms), NoBudget(), MaxHedges(2))
		require.NoError(t, err)
		start := time.Now()
		got := <-troupetest.Go(context.Background(), x, 1)
		assert.Equal(t, troupetest.Result[int]{Value: 3}, got)
		assert.Equal(t, 20*ms, time.Since(start))
		synctest.Wait()
		require.NoError(t, x.Close(context.Background()))
	})
}
