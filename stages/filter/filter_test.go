package filter_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/stages/filter"
	"github.com/troupe-go/troupe/troupetest"
)

var errOdd = errors.New("odd numbers are not served")

// evenOnly rejects odd requests and doubles even ones.
func evenOnly(v int) (int, error) {
	if v%2 != 0 {
		return 0, errOdd
	}
	return v * 2, nil
}

func newFilter(t *testing.T, pred func(int) (int, error), opts ...filter.Option) (*filter.Filter[int, int], *troupetest.Handle[int, int]) {
	mock, h := troupetest.NewMock[int, int]()
	f, err := filter.NewFilter[int, int](troupetest.NewSystem(t), mock, pred, opts...)
	require.NoError(t, err)
	return f, h
}

// spec: F1
func TestF1_RejectedRequestReturnsThePredicatesErrorAndNeverReachesTheInner(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, h := newFilter(t, evenOnly)
		h.Allow(10)
		r := <-troupetest.GoTimed[int, int](context.Background(), f, 3)
		assert.ErrorIs(t, r.Err, errOdd, "the predicate's error")
		assert.ErrorIs(t, r.Err, filter.ErrRejected, "and a rejection")
		var re *filter.RejectedError
		require.ErrorAs(t, r.Err, &re)
		assert.Equal(t, errOdd, re.Err)
		assert.Equal(t, "filter: request rejected: odd numbers are not served", r.Err.Error())
		assert.Zero(t, r.Took, "at once")
		synctest.Wait()
		assert.Zero(t, h.Calls(), "the inner service was never called")
		assert.Equal(t, 10, h.Allowed(), "nor asked for readiness")
		assert.Zero(t, f.Stats().Used)
	})
}

// spec: F1
func TestF1_ReadinessPassesThrough(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, h := newFilter(t, evenOnly, filter.Capacity(2))
		ctx := context.Background()
		a := troupetest.GoTimed[int, int](ctx, f, 2)
		synctest.Wait()
		assert.Equal(t, 1, h.Waiting(), "the stage waits for the inner service")
		b := troupetest.GoTimed[int, int](ctx, f, 4)
		synctest.Wait()
		st := f.Stats()
		assert.Equal(t, 2, st.Used)
		assert.Equal(t, 1, st.Queued, "and takes no further work meanwhile")
		tctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		_, err := f.Reserve(tctx)
		assert.ErrorIs(t, err, context.DeadlineExceeded, "callers wait in their reservations")

		h.Allow(2)
		for range 2 {
			req := h.Next(ctx)
			req.Respond(req.Value + 1)
		}
		assert.Equal(t, 5, (<-a).Value)
		assert.Equal(t, 9, (<-b).Value)

		// A readiness error breaks the stage (CORE7).
		cause := errors.New("gone")
		h.Break(cause)
		r := <-troupetest.GoTimed[int, int](ctx, f, 6)
		assert.ErrorIs(t, r.Err, cause)
		_, err = f.Reserve(ctx)
		assert.ErrorIs(t, err, troupe.ErrClosed)
	})
}

// spec: F3
func TestF3_PredicateRewritesTheRequest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, h := newFilter(t, evenOnly)
		ctx := context.Background()
		h.Allow(1)
		c := troupetest.GoTimed[int, int](ctx, f, 21*2)
		req := h.Next(ctx)
		assert.Equal(t, 84, req.Value, "the inner service got the rewritten request")
		req.Respond(req.Value)
		assert.Equal(t, 84, (<-c).Value)
	})
}

func TestPredicatePanicAnswersThatRequestOnly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, h := newFilter(t, func(v int) (int, error) {
			if v == 13 {
				panic("unlucky")
			}
			return v, nil
		})
		ctx := context.Background()
		r := <-troupetest.GoTimed[int, int](ctx, f, 13)
		assert.ErrorIs(t, r.Err, troupe.ErrPanic)
		assert.NotErrorIs(t, r.Err, filter.ErrRejected)
		assert.NotErrorIs(t, r.Err, troupe.ErrRestarted, "the stage itself did not fail")
		h.Allow(1)
		c := troupetest.GoTimed[int, int](ctx, f, 1)
		h.Next(ctx).Respond(1)
		assert.Equal(t, 1, (<-c).Value, "the stage goes on")
	})
}

func TestFilterLayerAndBadConfig(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sys := troupetest.NewSystem(t)
		echo := actors.Func(func(_ context.Context, v int) (int, error) { return v, nil })
		st, err := troupe.NewBuilder[int, int]().Layer(filter.Layer[int, int](evenOnly)).Build(sys, echo)
		require.NoError(t, err)
		v, err := troupe.Do[int, int](context.Background(), st, 5)
		assert.ErrorIs(t, err, errOdd)
		assert.Zero(t, v)
		v, err = troupe.Do[int, int](context.Background(), st, 6)
		assert.NoError(t, err)
		assert.Equal(t, 12, v)

		_, err = filter.NewFilter[int, int](sys, echo, nil)
		troupetest.BadOption(t, err, "filter", "predicate")
		_, err = filter.NewFilter[int, int](sys, echo, evenOnly, filter.Capacity(1<<31))
		troupetest.BadOption(t, err, "filter", "Capacity")
		_, err = filter.NewAsync[int, int](sys, echo, nil)
		troupetest.BadOption(t, err, "asyncfilter", "check")
		_, err = filter.NewAsync[int, int](sys, echo, func(_ context.Context, v int) (int, error) { return v, nil }, filter.Capacity(-1))
		troupetest.BadOption(t, err, "asyncfilter", "Capacity")
	})
}

func ExampleNewFilter() {
	ctx := context.Background()
	sys := actors.NewSystem()
	defer sys.Shutdown(ctx)
	echo := actors.Func(func(_ context.Context, s string) (string, error) { return "served " + s, nil })
	notEmpty := func(s string) (string, error) {
		if s == "" {
			return "", errors.New("empty request")
		}
		return s, nil
	}
	f, _ := filter.NewFilter[string, string](sys, echo, notEmpty)
	fmt.Println(troupe.Do[string, string](ctx, f, "a"))
	_, err := troupe.Do[string, string](ctx, f, "")
	fmt.Println(errors.Is(err, filter.ErrRejected), err)
	// Output:
	// served a <nil>
	// true filter: request rejected: empty request
}
