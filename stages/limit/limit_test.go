package limit_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/stages/limit"
	"github.com/troupe-go/troupe/troupetest"
)

func overMock(t *testing.T, n int) (*limit.Limit[int, int], *troupetest.Handle[int, int]) {
	mock, h := troupetest.NewMock[int, int]()
	l, err := limit.New[int, int](troupetest.NewSystem(t), mock, n)
	require.NoError(t, err)
	return l, h
}

// spec: C1, C2
func TestC1_C2_PermitHeldUntilTheOutcomeIsDelivered(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l, h := overMock(t, 2)
		ctx := context.Background()
		h.Allow(10)
		a, b := troupetest.Go(ctx, l, 1), troupetest.Go(ctx, l, 2)
		reqs := []*troupetest.Request[int, int]{h.Next(ctx), h.Next(ctx)}
		assert.Equal(t, 0, l.Available(), "two in flight")

		c := troupetest.Go(ctx, l, 3)
		synctest.Wait()
		assert.Equal(t, 1, l.Stats().Waiting, "the third waits for a permit")
		assert.Zero(t, h.TryNext(), "and the inner service was not asked")

		reqs[0].Respond(reqs[0].Value)
		reqC := h.Next(ctx) // the outcome was delivered: its permit went to 3
		assert.Equal(t, 3, reqC.Value)
		assert.Equal(t, 0, l.Available())
		reqs[1].Respond(reqs[1].Value)
		reqC.Respond(3)
		for _, ch := range []<-chan troupetest.Result[int]{a, b, c} {
			assert.NoError(t, (<-ch).Err)
		}
		synctest.Wait()
		assert.Equal(t, 2, l.Available())
	})
}

// spec: C2
func TestC2_PermitComesBackWhereverTheCallerGivesUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l, h := overMock(t, 1)
		ctx := context.Background()

		// In flight at the inner service.
		h.Allow(1)
		actx, cancel := context.WithCancel(ctx)
		a := troupetest.Go(actx, l, 1)
		req := h.Next(ctx)
		assert.Equal(t, 0, l.Available())
		cancel()
		assert.ErrorIs(t, (<-a).Err, context.Canceled)
		synctest.Wait()
		assert.Equal(t, 1, l.Available(), "abandoned at the inner service")
		req.Respond(1) // late, ignored

		// Waiting in the stage for the inner service's readiness.
		bctx, cancel := context.WithCancel(ctx)
		b := troupetest.Go(bctx, l, 2)
		synctest.Wait()
		assert.Equal(t, 0, l.Available())
		cancel()
		assert.ErrorIs(t, (<-b).Err, context.Canceled)
		synctest.Wait()
		assert.Equal(t, 1, l.Available(), "abandoned while parked")

		// Waiting for the permit itself.
		p, err := l.Reserve(ctx)
		require.NoError(t, err)
		dctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		_, err = l.Reserve(dctx)
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		require.NoError(t, p.Release())
		assert.Equal(t, 1, l.Available(), "abandoned while reserving")
	})
}

// spec: C2
func TestC2_RandomCancellationsNeverLeakPermits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sys := troupetest.NewSystem(t)
		slow := actors.Func(func(ctx context.Context, v int) (int, error) {
			select {
			case <-time.After(time.Duration(v%7) * time.Millisecond):
				return v, nil
			case <-ctx.Done():
				return 0, ctx.Err()
			}
		})
		l, err := limit.New[int, int](sys, slow, 3)
		require.NoError(t, err)
		r := rand.New(rand.NewPCG(3, 4))
		var wg sync.WaitGroup
		for i := range 200 {
			ctx, cancel := context.WithTimeout(context.Background(), time.Duration(r.IntN(10))*time.Millisecond)
			wg.Go(func() {
				defer cancel()
				_, _ = troupe.Do[int, int](ctx, l, i)
			})
		}
		wg.Wait()
		synctest.Wait()
		assert.Equal(t, 3, l.Available())
	})
}

// spec: C3
func TestC3_CopySharesTheSemaphoreButHoldsNoPermit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l, _ := overMock(t, 1)
		p, err := l.Reserve(context.Background())
		require.NoError(t, err)
		cp := *l
		assert.Equal(t, 0, cp.Available(), "the copy sees the same semaphore")
		done, cancel := context.WithCancel(context.Background())
		cancel()
		_, err = cp.Reserve(done)
		assert.ErrorIs(t, err, context.Canceled, "and holds no permit of its own")
		require.NoError(t, p.Release())
		assert.Equal(t, 1, cp.Available())
	})
}

func TestBadLimitIsAnError(t *testing.T) {
	f := actors.Func(func(_ context.Context, v int) (int, error) { return v, nil })
	_, err := limit.New[int, int](nil, f, 0)
	troupetest.BadOption(t, err, "limit", "Limit")
}

func ExampleNew() {
	sys := actors.NewSystem()
	defer sys.Shutdown(context.Background())
	f := actors.Func(func(_ context.Context, v int) (int, error) { return v * 2, nil })
	l, _ := limit.New[int, int](sys, f, 20)
	out, err := troupe.Do[int, int](context.Background(), l, 21)
	fmt.Println(out, err, l.Available())
	// Output: 42 <nil> 20
}
