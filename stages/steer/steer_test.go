package steer_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/stages"
	"github.com/troupe-go/troupe/stages/steer"
	"github.com/troupe-go/troupe/troupetest"
)

func byParity(v int, n int) int { return v % n }

// Each request goes to the service its picker names, by every path: the
// one-step call, a permit from Reserve, a permit from ReserveFor, and a
// stack built with the layer (the inner service is index 0).
//
// spec: BAL4
func TestEachRequestGoesToTheServiceThePickerNames(t *testing.T) {
	sys := troupetest.NewSystem(t)
	even := actors.Func(func(_ context.Context, v int) (string, error) { return "even", nil })
	odd := actors.Func(func(_ context.Context, v int) (string, error) { return "odd", nil })
	st, err := steer.New(byParity, troupe.Service[int, string](even), odd)
	require.NoError(t, err)
	ctx := context.Background()
	for v, want := range []string{"even", "odd", "even", "odd"} {
		got, err := troupe.Do(ctx, st, v)
		require.NoError(t, err)
		assert.Equal(t, want, got, "Do %d", v)

		p, err := st.Reserve(ctx)
		require.NoError(t, err)
		got, err = p.Call(ctx, v)
		require.NoError(t, err)
		assert.Equal(t, want, got, "Reserve %d", v)

		p, err = st.ReserveFor(ctx, v)
		require.NoError(t, err)
		got, err = p.Call(ctx, v)
		require.NoError(t, err)
		assert.Equal(t, want, got, "ReserveFor %d", v)
	}

	stack, err := stages.Stack[int, string]().Retry(1, nil).Layer(steer.Layer(byParity, troupe.Service[int, string](odd))).Build(sys, even)
	require.NoError(t, err)
	defer stack.Close(ctx)
	got, err := troupe.Do(ctx, stack, 3)
	require.NoError(t, err)
	assert.Equal(t, "odd", got)
	got, err = troupe.Do(ctx, stack, 4)
	require.NoError(t, err)
	assert.Equal(t, "even", got)
}

// The readiness of a request is its chosen service's: with one service's
// limit full, requests for it wait (until their context ends, or the limit
// frees) while requests for the other go at once.
//
// spec: BAL4
func TestARequestWaitsOnlyForItsChosenServicesReadiness(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sys := troupetest.NewSystem(t)
		ctx := context.Background()
		m0, h0 := troupetest.NewMock[int, int]()
		m1, h1 := troupetest.NewMock[int, int]()
		h0.Allow(100)
		h1.Allow(100)
		s0, err := stages.Stack[int, int]().Limit(1).Build(sys, m0)
		require.NoError(t, err)
		defer s0.Close(ctx)
		s1, err := stages.Stack[int, int]().Limit(1).Build(sys, m1)
		require.NoError(t, err)
		defer s1.Close(ctx)
		st, err := steer.New(byParity, troupe.Service[int, int](s0), s1)
		require.NoError(t, err)

		first := troupetest.GoTimed[int, int](ctx, st, 0)
		r0 := h0.Next(ctx) // service 0's one slot is taken
		second := troupetest.GoTimed[int, int](ctx, st, 2)
		p, err := st.Reserve(ctx) // the Steer's own permit never waits
		require.NoError(t, err)
		third := troupetest.GoWith(ctx, p, 4)
		dctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		gaveUp := troupetest.GoTimed[int, int](dctx, st, 6)
		_, err = st.ReserveFor(dctx, 8)
		assert.ErrorIs(t, err, context.DeadlineExceeded, "ReserveFor waits on the chosen service, with ctx")

		for v := 1; v < 6; v += 2 {
			res := troupetest.GoTimed[int, int](ctx, st, v)
			h1.Next(ctx).Respond(v * 10)
			assert.Equal(t, troupetest.Timed[int]{Value: v * 10}, <-res, "service 1 is not held up")
		}
		r := <-gaveUp
		assert.ErrorIs(t, r.Err, context.DeadlineExceeded)
		assert.Equal(t, time.Second, r.Took)
		assert.Nil(t, h0.TryNext(), "nothing else reached service 0 while its slot was taken")

		time.Sleep(time.Minute)
		r0.Respond(0)
		assert.Equal(t, troupetest.Timed[int]{Value: 0, Took: time.Second + time.Minute}, <-first)
		req := h0.Next(ctx)
		req.Respond(req.Value * 10)
		req = h0.Next(ctx)
		req.Respond(req.Value * 10)
		got := <-second
		require.NoError(t, got.Err)
		assert.Equal(t, 20, got.Value)
		assert.Equal(t, time.Second+time.Minute, got.Took, "it waited for service 0's slot")
		assert.Equal(t, troupetest.Result[int]{Value: 40}, <-third)
	})
}

// A picker that returns an index out of range, or panics, fails that call
// without calling any service; the Steer goes on. Bad configurations are
// errors at construction.
//
// spec: BAL4
func TestABadPickIsTheCallsErrorAndBadConfigIsNew(t *testing.T) {
	ctx := context.Background()
	calls := 0
	svc := actors.Func(func(_ context.Context, v int) (int, error) { calls++; return v, nil })
	st, err := steer.New(func(v int, n int) int {
		if v == 99 {
			panic("no route for 99")
		}
		return v
	}, troupe.Service[int, int](svc), svc)
	require.NoError(t, err)
	for _, v := range []int{2, -1} {
		_, err = troupe.Do(ctx, st, v)
		var nr *steer.NoRouteError
		require.ErrorAs(t, err, &nr)
		assert.ErrorIs(t, err, steer.ErrNoRoute)
		assert.Equal(t, steer.NoRouteError{Index: v, Services: 2}, *nr)
		p, err := st.Reserve(ctx)
		require.NoError(t, err)
		_, err = p.Call(ctx, v)
		assert.ErrorIs(t, err, steer.ErrNoRoute)
		_, err = st.ReserveFor(ctx, v)
		assert.ErrorIs(t, err, steer.ErrNoRoute)
	}
	_, err = troupe.Do(ctx, st, 99)
	var pe *troupe.PanicError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "no route for 99", pe.Value)
	assert.Zero(t, calls)
	v, err := troupe.Do(ctx, st, 1)
	require.NoError(t, err)
	assert.Equal(t, 1, v)

	cctx, cancel := context.WithCancel(ctx)
	cancel()
	_, err = st.Reserve(cctx)
	assert.ErrorIs(t, err, context.Canceled)

	for name, mk := range map[string]func() error{
		"nil picker":  func() error { _, err := steer.New[int, int](nil, svc); return err },
		"no services": func() error { _, err := steer.New[int, int](byParity); return err },
		"nil service": func() error { _, err := steer.New(byParity, troupe.Service[int, int](svc), nil); return err },
		"layer": func() error {
			_, err := stages.Stack[int, int]().Layer(steer.Layer[int, int](nil)).Build(troupetest.NewSystem(t), svc)
			return err
		},
	} {
		err := mk()
		var ce *troupe.ConfigError
		assert.ErrorAs(t, err, &ce, name)
		assert.True(t, errors.Is(err, troupe.ErrBadConfig), name)
	}
}
