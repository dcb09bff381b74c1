package loadshed_test

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
	"github.com/troupe-go/troupe/stages/limit"
	"github.com/troupe-go/troupe/stages/loadshed"
	"github.com/troupe-go/troupe/troupetest"
)

func overMock(t *testing.T, opts ...loadshed.Option) (*loadshed.LoadShed[int, int], *troupetest.Handle[int, int]) {
	mock, h := troupetest.NewMock[int, int]()
	ls, err := loadshed.New[int, int](troupetest.NewSystem(t), mock, opts...)
	require.NoError(t, err)
	return ls, h
}

// spec: LS1
func TestLS1_ReserveIsAlwaysImmediate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ls, h := overMock(t)
		ctx := context.Background()
		a := troupetest.GoTimed[int, int](ctx, ls, 1) // the inner is not ready: a waits in the stage's only slot
		synctest.Wait()
		require.Equal(t, 1, h.Waiting())
		require.Equal(t, 1, ls.Stats().Used)

		start := time.Now()
		for range 3 {
			p, err := ls.Reserve(ctx)
			require.NoError(t, err, "reserving reports ready although the inner is not")
			require.NoError(t, p.Release(), "an overloaded permit can be released")
		}
		assert.Zero(t, time.Since(start), "and never waits")
		st := ls.Stats()
		assert.Equal(t, 1, st.Used, "overloaded permits hold no slot")
		assert.Zero(t, st.Waiting)

		h.Allow(1)
		req := h.Next(ctx)
		req.Respond(10)
		assert.Equal(t, 10, (<-a).Value)
		synctest.Wait()

		// The inner is ready again: the slot is free and the permit ordinary.
		h.Allow(1)
		b := troupetest.GoTimed[int, int](ctx, ls, 2)
		h.Next(ctx).Respond(20)
		assert.Equal(t, troupetest.Timed[int]{Value: 20}, <-b)

		cctx, cancel := context.WithCancel(ctx)
		cancel()
		_, err := ls.Reserve(cctx)
		assert.ErrorIs(t, err, context.Canceled, "a done context still says so")
		assert.Zero(t, ls.Stats().Used)
	})
}

// spec: LS1
func TestLS1_InnerReadinessErrorPassesUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ls, h := overMock(t)
		ctx := context.Background()
		a := troupetest.GoTimed[int, int](ctx, ls, 1)
		synctest.Wait()
		cause := errors.New("pool exhausted for good")
		h.Break(cause)
		r := <-a
		assert.ErrorIs(t, r.Err, troupe.ErrClosed)
		assert.ErrorIs(t, r.Err, cause)

		_, err := ls.Reserve(ctx)
		assert.ErrorIs(t, err, cause, "reserving returns the inner readiness error")
		var ce *troupe.ClosedError
		require.ErrorAs(t, err, &ce)
		assert.Equal(t, "loadshed", ce.Service)
		assert.Zero(t, h.Calls())
	})
}

// spec: LS1
func TestLS1_ClosedLoadShedRefusesReservations(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ls, _ := overMock(t)
		require.NoError(t, ls.Close(context.Background()))
		_, err := ls.Reserve(context.Background())
		assert.ErrorIs(t, err, troupe.ErrClosed)
	})
}

// spec: LS2
func TestLS2_CallWhileNotReadyIsShedWithoutTouchingTheInner(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ls, h := overMock(t)
		ctx := context.Background()
		a := troupetest.GoTimed[int, int](ctx, ls, 1)
		synctest.Wait()

		// Reserve first, call later: the permit says what reserving saw.
		p, err := ls.Reserve(ctx)
		require.NoError(t, err)
		time.Sleep(time.Second)
		start := time.Now()
		_, err = p.Call(ctx, 2)
		assert.Equal(t, loadshed.ErrOverloaded, err, "the sentinel itself")
		assert.Zero(t, time.Since(start), "at once")
		_, err = p.Call(ctx, 2)
		assert.ErrorIs(t, err, troupe.ErrPermitUsed, "an overloaded permit is still used once")

		for i := range 5 {
			r := <-troupetest.GoTimed[int, int](ctx, ls, 10+i)
			assert.ErrorIs(t, r.Err, loadshed.ErrOverloaded)
			assert.Zero(t, r.Took)
		}
		synctest.Wait()
		assert.Zero(t, h.Calls(), "the inner service never saw a shed request")
		assert.Equal(t, 1, h.Waiting(), "nor was asked for readiness for one: only a's wait")
		assert.Equal(t, 1, ls.Stats().Used)

		h.Allow(1)
		h.Next(ctx).Respond(1)
		r := <-a
		assert.NoError(t, r.Err)
		assert.Equal(t, 1, r.Value, "the request that waited is served")
	})
}

// spec: LS2
func TestLS2_CapacityIsHowManyMayWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ls, h := overMock(t, loadshed.Capacity(3))
		ctx := context.Background()
		var waiting []<-chan troupetest.Timed[int]
		for i := range 3 {
			waiting = append(waiting, troupetest.GoTimed[int, int](ctx, ls, i)) // one parked, two queued
			synctest.Wait()
		}
		assert.ErrorIs(t, (<-troupetest.GoTimed[int, int](ctx, ls, 9)).Err, loadshed.ErrOverloaded)
		h.Allow(3)
		for range 3 {
			r := h.Next(ctx)
			r.Respond(r.Value)
		}
		for i, c := range waiting {
			assert.Equal(t, i, (<-c).Value)
		}
	})
}

func TestBadCapacityIsAnError(t *testing.T) {
	f := actors.Func(func(_ context.Context, v int) (int, error) { return v, nil })
	_, err := loadshed.New[int, int](nil, f, loadshed.Capacity(-1))
	troupetest.BadOption(t, err, "loadshed", "Capacity")
	assert.ErrorIs(t, err, troupe.ErrBadConfig)
}

func ExampleNew() {
	ctx := context.Background()
	sys := actors.NewSystem()
	defer sys.Shutdown(ctx)
	entered, release := make(chan int, 2), make(chan struct{})
	slow := actors.Func(func(_ context.Context, v int) (int, error) {
		entered <- v
		<-release
		return v, nil
	})
	// LoadShed outside a limit of one: the limit says "not now" while a
	// call is in flight, and LoadShed turns that into ErrOverloaded.
	svc, _ := troupe.NewBuilder[int, int]().
		Layer(loadshed.Layer[int, int]()).
		Layer(limit.Layer[int, int](1)).
		Build(sys, slow)
	defer svc.Close(ctx)

	first := make(chan int)
	go func() { v, _ := troupe.Do(ctx, svc, 1); first <- v }()
	<-entered // the first call holds the limit

	p, _ := svc.Reserve(ctx) // LoadShed's one slot: this request may wait
	second := make(chan int)
	go func() { v, _ := p.Call(ctx, 2); second <- v }()

	_, err := troupe.Do(ctx, svc, 3) // no slot left: shed at once
	fmt.Println(err)
	close(release)
	fmt.Println(<-first, <-second)
	// Output:
	// loadshed: service overloaded
	// 1 2
}
