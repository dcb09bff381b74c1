package loadshed_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/stages/buffer"
	"github.com/troupe-go/troupe/stages/limit"
	"github.com/troupe-go/troupe/stages/loadshed"
	"github.com/troupe-go/troupe/troupetest"
)

// spec: LS3
func TestLS3_LoadShedOutsideLimitSheds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mock, h := troupetest.NewMock[int, int]()
		st, err := troupe.NewBuilder[int, int]().
			Layer(loadshed.Layer[int, int]()).
			Layer(limit.Layer[int, int](1)).
			Build(troupetest.NewSystem(t), mock)
		require.NoError(t, err)
		ctx := context.Background()
		h.Allow(10) // the inner service itself is always ready: only the limit says "not now"

		a := troupetest.GoTimed[int, int](ctx, st, 1)
		reqA := h.Next(ctx) // in flight: the limit's only permit is held until its outcome
		b := troupetest.GoTimed[int, int](ctx, st, 2)
		synctest.Wait() // b found the limit busy and waits in LoadShed's slot
		for i := range 3 {
			r := <-troupetest.GoTimed[int, int](ctx, st, 3+i)
			assert.ErrorIs(t, r.Err, loadshed.ErrOverloaded, "shed at once")
			assert.Zero(t, r.Took)
		}
		assert.Nil(t, h.TryNext())

		reqA.Respond(1)
		assert.Equal(t, 1, (<-a).Value)
		reqB := h.Next(ctx)
		assert.Equal(t, 2, reqB.Value, "the waiting request goes as soon as the limit frees")
		reqB.Respond(2)
		assert.Equal(t, 2, (<-b).Value)
		assert.EqualValues(t, 2, h.Calls())
	})
}

// spec: LS3
func TestLS3_LimitOutsideLoadShedNeverSheds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mock, h := troupetest.NewMock[int, int]()
		st, err := troupe.NewBuilder[int, int]().
			Layer(limit.Layer[int, int](1)).
			Layer(loadshed.Layer[int, int]()).
			Build(troupetest.NewSystem(t), mock)
		require.NoError(t, err)
		lim := st.Service.(*limit.Limit[int, int])
		ctx := context.Background()
		h.Allow(10)

		a := troupetest.GoTimed[int, int](ctx, st, 1)
		reqA := h.Next(ctx)
		var rest []<-chan troupetest.Timed[int]
		for i := range 3 {
			rest = append(rest, troupetest.GoTimed[int, int](ctx, st, 2+i))
		}
		synctest.Wait()
		assert.Equal(t, 3, lim.Stats().Waiting, "the other callers just wait at the limit")
		time.Sleep(time.Minute)
		reqA.Respond(1)
		assert.Equal(t, 1, (<-a).Value)
		for range 3 {
			r := h.Next(ctx)
			r.Respond(r.Value)
		}
		for i, c := range rest {
			r := <-c
			require.NoError(t, r.Err, "nothing is shed")
			assert.Equal(t, 2+i, r.Value)
		}
	})
}

// spec: LS1, LS2
func TestLoadShedInsideAnotherStageIsAlwaysReady(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mock, h := troupetest.NewMock[int, int]()
		sys := troupetest.NewSystem(t)
		ls, err := loadshed.New[int, int](sys, mock)
		require.NoError(t, err)
		st, err := troupe.NewBuilder[int, int]().Layer(buffer.Layer[int, int](4)).Build(sys, ls)
		require.NoError(t, err)
		buf := st.Service.(*buffer.Buffer[int, int])
		ctx := context.Background()

		a := troupetest.GoTimed[int, int](ctx, st, 1)
		synctest.Wait()
		assert.Equal(t, 1, ls.Stats().Used, "a waits in LoadShed for the inner service")
		assert.Equal(t, 0, buf.Stats().Used, "the buffer never waited for LoadShed")
		for i := range 3 {
			r := <-troupetest.GoTimed[int, int](ctx, st, 2+i)
			assert.ErrorIs(t, r.Err, loadshed.ErrOverloaded)
			assert.Zero(t, r.Took)
		}
		assert.Zero(t, h.Calls())
		assert.Equal(t, 0, buf.Stats().Used)

		h.Allow(1)
		h.Next(ctx).Respond(1)
		assert.Equal(t, 1, (<-a).Value)

		// A closed LoadShed is a broken inner service to the buffer.
		require.NoError(t, ls.Close(ctx))
		r := <-troupetest.GoTimed[int, int](ctx, st, 5)
		assert.ErrorIs(t, r.Err, troupe.ErrClosed)
		_, err = buf.Reserve(ctx)
		assert.ErrorIs(t, err, troupe.ErrClosed, "the buffer closed too")
	})
}
