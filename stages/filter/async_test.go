package filter_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/actors/stagekit"
	"github.com/troupe-go/troupe/stages"
	"github.com/troupe-go/troupe/stages/filter"
	"github.com/troupe-go/troupe/troupetest"
)

func newAsync(t *testing.T, c *checker, opts ...filter.Option) (*filter.AsyncFilter[int, int], *troupetest.Handle[int, int]) {
	mock, h := troupetest.NewMock[int, int]()
	f, err := filter.NewAsync[int, int](troupetest.NewSystem(t), mock, c.check, opts...)
	require.NoError(t, err)
	return f, h
}

// spec: F2, F3
func TestF2_InnerIsCalledOnlyAfterTheCheckPasses(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newChecker()
		f, h := newAsync(t, c)
		ctx := context.Background()
		h.Allow(10)

		a := troupetest.GoTimed[int, int](ctx, f, 2)
		cc := <-c.calls
		assert.Equal(t, 2, cc.v)
		time.Sleep(time.Minute) // the check takes its time
		assert.Nil(t, h.TryNext(), "no inner call while the check runs")
		assert.Equal(t, 1, f.Checking())
		assert.Equal(t, 1, f.Stats().Used, "the request keeps its slot during the check")
		cc.pass(20)
		req := h.Next(ctx)
		assert.Equal(t, 20, req.Value, "the check's rewritten request is sent (F3)")
		req.Respond(200)
		assert.Equal(t, troupetest.Timed[int]{Value: 200, Took: time.Minute}, <-a)

		b := troupetest.GoTimed[int, int](ctx, f, 3)
		(<-c.calls).reject(errOdd)
		r := <-b
		assert.ErrorIs(t, r.Err, filter.ErrRejected)
		assert.ErrorIs(t, r.Err, errOdd)
		synctest.Wait()
		assert.EqualValues(t, 1, h.Calls(), "a rejected request never reaches the inner service")
		assert.Zero(t, f.Checking())
		assert.Zero(t, f.Stats().Used)
	})
}

// spec: F2
func TestF2_ChecksRunOffTheActorAndAreBoundedByCapacity(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newChecker()
		f, h := newAsync(t, c, filter.Capacity(3))
		ctx := context.Background()
		h.Allow(10)
		var res []<-chan troupetest.Timed[int]
		for i := range 4 {
			res = append(res, troupetest.GoTimed[int, int](ctx, f, i))
		}
		var ccs []*checkCall
		for range 3 {
			ccs = append(ccs, <-c.calls) // three checks wait at once: none runs on the actor
		}
		synctest.Wait()
		assert.Equal(t, 3, f.Checking())
		assert.Len(t, c.calls, 0, "the fourth request is not being checked")
		assert.Equal(t, 1, f.Stats().Waiting, "its caller waits for a slot")

		for i := len(ccs) - 1; i >= 0; i-- { // answered in any order
			ccs[i].pass(ccs[i].v + 100)
			req := h.Next(ctx)
			req.Respond(req.Value)
		}
		last := <-c.calls
		last.pass(last.v + 100)
		req := h.Next(ctx)
		req.Respond(req.Value)
		for i, ch := range res {
			r := <-ch
			require.NoError(t, r.Err)
			assert.Equal(t, i+100, r.Value)
		}
	})
}

// spec: F2
func TestF2_CheckIsContextAware(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		type key struct{}
		c := newChecker()
		f, h := newAsync(t, c)
		h.Allow(10)
		ctx, cancel := context.WithCancel(context.WithValue(context.Background(), key{}, "caller's"))
		a := troupetest.GoTimed[int, int](ctx, f, 2)
		cc := <-c.calls
		assert.Equal(t, "caller's", cc.ctx.Value(key{}), "the check sees the request's context")
		time.Sleep(time.Second)
		cancel()
		<-cc.ctx.Done()
		r := <-a
		assert.ErrorIs(t, r.Err, context.Canceled)
		assert.Equal(t, time.Second, r.Took)
		synctest.Wait()
		assert.Zero(t, f.Checking())
		assert.Zero(t, f.Stats().Used)

		// A check that ignores its context and passes late: the request's
		// context ended, so it is answered with the context's error and the
		// inner service is not called.
		c.ignoreCtx = true
		dctx, cancel2 := context.WithTimeout(context.Background(), time.Second)
		defer cancel2()
		b := troupetest.GoTimed[int, int](dctx, f, 4)
		cc = <-c.calls
		r = <-b
		assert.ErrorIs(t, r.Err, context.DeadlineExceeded, "the caller gives up at its deadline")
		assert.Equal(t, 1, f.Checking(), "the stage still holds the request")
		cc.pass(4)
		synctest.Wait()
		assert.Zero(t, f.Checking())
		assert.Zero(t, f.Stats().Used)
		assert.Zero(t, h.Calls(), "never reached the inner service")
	})
}

// spec: F2
func TestF2_ChecksPassingWhileTheInnerIsNotReadyWaitTheirTurn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newChecker()
		f, h := newAsync(t, c, filter.Capacity(4))
		ctx := context.Background()
		var res []<-chan troupetest.Timed[int]
		for i := range 4 {
			res = append(res, troupetest.GoTimed[int, int](ctx, f, i))
		}
		var ccs []*checkCall
		for range 4 {
			ccs = append(ccs, <-c.calls)
		}
		for _, cc := range ccs {
			cc.pass(cc.v * 10)
		}
		synctest.Wait()
		st := f.Stats()
		assert.Equal(t, 4, st.Used, "all four keep their slots: one waits for the inner service, three in line behind it")
		assert.Equal(t, 0, st.Queued, "none went back to the mailbox")
		assert.Equal(t, 1, h.Waiting())
		assert.Zero(t, f.Checking())
		assert.Zero(t, stagekit.Violations())

		h.Allow(4)
		for range 4 {
			req := h.Next(ctx)
			req.Respond(req.Value)
		}
		for i, ch := range res {
			assert.Equal(t, i*10, (<-ch).Value)
		}
	})
}

// spec: F2
func TestF2_CloseWaitsForChecksThenFailsThem(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newChecker()
		f, h := newAsync(t, c)
		ctx := context.Background()
		h.Allow(10)

		// Close drains a check that finishes in time.
		a := troupetest.GoTimed[int, int](ctx, f, 2)
		cc := <-c.calls
		closed := make(chan error, 1)
		go func() { closed <- f.Close(ctx) }()
		synctest.Wait()
		select {
		case err := <-closed:
			t.Fatalf("Close returned while a check ran: %v", err)
		default:
		}
		cc.pass(2)
		h.Next(ctx).Respond(22)
		assert.Equal(t, 22, (<-a).Value)
		assert.NoError(t, <-closed)

		// A check that does not finish before Close's context ends is
		// answered with ErrClosed, and its context is cancelled.
		g, _ := newAsync(t, c)
		b := troupetest.GoTimed[int, int](ctx, g, 4)
		cc = <-c.calls
		cctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		assert.ErrorIs(t, g.Close(cctx), context.DeadlineExceeded)
		r := <-b
		assert.ErrorIs(t, r.Err, troupe.ErrClosed)
		assert.Equal(t, time.Second, r.Took)
		<-cc.ctx.Done()
		synctest.Wait()
		assert.Zero(t, g.Checking())
		assert.Zero(t, g.Stats().Used)
	})
}

// spec: F2
func TestF2_RestartAnswersChecksInFlightOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newChecker()
		f, h := newAsync(t, c)
		ctx := context.Background()
		a := troupetest.GoTimed[int, int](ctx, f, 1)
		b := troupetest.GoTimed[int, int](ctx, f, 2)
		ca, cb := <-c.calls, <-c.calls
		h.PanicOnReady("inner bug") // the stage panics when it asks for readiness
		ca.pass(ca.v)
		for _, ch := range []<-chan troupetest.Timed[int]{a, b} {
			r := <-ch
			assert.ErrorIs(t, r.Err, troupe.ErrRestarted, "both requests the stage held")
			assert.ErrorIs(t, r.Err, troupe.ErrPanic)
		}
		<-cb.ctx.Done() // the other check was cancelled; its late result is ignored
		synctest.Wait()
		assert.Zero(t, f.Checking())
		assert.Zero(t, f.Stats().Used)

		h.Allow(1)
		d := troupetest.GoTimed[int, int](ctx, f, 3)
		(<-c.calls).pass(3)
		h.Next(ctx).Respond(30)
		assert.Equal(t, 30, (<-d).Value, "the restarted stage goes on")
	})
}

func TestAsyncCheckPanicAnswersThatRequest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mock, h := troupetest.NewMock[int, int]()
		f, err := filter.NewAsync[int, int](troupetest.NewSystem(t), mock, func(_ context.Context, v int) (int, error) {
			if v == 13 {
				panic("unlucky")
			}
			return v, nil
		})
		require.NoError(t, err)
		r := <-troupetest.GoTimed[int, int](context.Background(), f, 13)
		assert.ErrorIs(t, r.Err, troupe.ErrPanic)
		var pe *troupe.PanicError
		require.ErrorAs(t, r.Err, &pe)
		assert.Equal(t, "asyncfilter check", pe.Where)
		assert.Zero(t, h.Calls())
	})
}

func ExampleNewAsync() {
	ctx := context.Background()
	sys := actors.NewSystem()
	defer sys.Shutdown(ctx)
	echo := actors.Func(func(_ context.Context, s string) (string, error) { return "served " + s, nil })
	// The check may wait (here: a lookup with its own deadline); it runs
	// on a goroutine of its own and may rewrite the request.
	authorised := func(ctx context.Context, s string) (string, error) {
		select {
		case <-time.After(time.Millisecond):
		case <-ctx.Done():
			return "", ctx.Err()
		}
		if !strings.HasPrefix(s, "token:") {
			return "", errors.New("no token")
		}
		return strings.TrimPrefix(s, "token:"), nil
	}
	svc, _ := stages.Stack[string, string]().
		AsyncFilter(authorised).
		Build(sys, echo)
	fmt.Println(troupe.Do(ctx, svc, "token:report"))
	_, err := troupe.Do(ctx, svc, "report")
	fmt.Println(err)
	// Output:
	// served report <nil>
	// filter: request rejected: no token
}
