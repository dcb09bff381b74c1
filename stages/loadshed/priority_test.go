package loadshed_test

import (
	"context"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/stages/buffer"
	"github.com/troupe-go/troupe/stages/loadshed"
	"github.com/troupe-go/troupe/troupetest"
)

// admitted reports whether a permit reserved with ctx holds a slot (an
// ordinary permit) rather than shedding (an overloaded one); it keeps an
// ordinary permit reserved until the test ends and calls an overloaded one.
func admitted(t *testing.T, ls *loadshed.LoadShed[int, int], ctx context.Context) bool {
	t.Helper()
	before := ls.Stats().Used
	p, err := ls.Reserve(ctx)
	require.NoError(t, err)
	if ls.Stats().Used == before+1 {
		t.Cleanup(func() { assert.NoError(t, p.Release()) })
		return true
	}
	_, err = p.Call(ctx, 0)
	require.ErrorIs(t, err, loadshed.ErrOverloaded)
	return false
}

// spec: PS1
func TestPS1_LowerPrioritiesAreShedFirst(t *testing.T) {
	ls, _ := overMock(t, loadshed.Capacity(5), loadshed.KeepFor(loadshed.High, 2), loadshed.KeepFor(loadshed.Critical, 1))
	ctx := context.Background()
	low := loadshed.WithPriority(ctx, loadshed.Low)
	high := loadshed.WithPriority(ctx, loadshed.High)
	critical := loadshed.WithPriority(ctx, loadshed.Critical)
	assert.Equal(t, loadshed.Normal, loadshed.PriorityFrom(ctx), "no priority is Normal")
	assert.Equal(t, loadshed.High, loadshed.PriorityFrom(high))

	assert.True(t, admitted(t, ls, low), "slot 1")
	assert.True(t, admitted(t, ls, ctx), "slot 2: Low and Normal may use 5-2-1")
	assert.False(t, admitted(t, ls, low), "the rest is kept: Low is shed")
	assert.False(t, admitted(t, ls, ctx), "and so is Normal")
	assert.True(t, admitted(t, ls, high), "slot 3: High may use 5-1")
	assert.True(t, admitted(t, ls, high), "slot 4")
	assert.False(t, admitted(t, ls, high), "the last is Critical's")
	assert.False(t, admitted(t, ls, ctx), "Normal still shed")
	assert.True(t, admitted(t, ls, critical), "slot 5")
	assert.False(t, admitted(t, ls, critical), "full: everyone is shed")
	assert.Equal(t, 5, ls.Stats().Used)
}

// spec: PS1 — the priority travels in the request's context through a
// stage outside the LoadShed, which sends the request in without a
// reservation of its own.
func TestPS1_ThePriorityTravelsWithTheRequest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mock, h := troupetest.NewMock[int, int]()
		st, err := troupe.NewBuilder[int, int]().
			Layer(buffer.Layer[int, int](8)).
			Layer(loadshed.Layer[int, int](loadshed.Capacity(2), loadshed.KeepFor(loadshed.High, 1))).
			Build(troupetest.NewSystem(t), mock)
		require.NoError(t, err)
		ctx := context.Background()
		high := loadshed.WithPriority(ctx, loadshed.High)

		first := troupetest.Go(ctx, st, 1) // the inner is not ready: it waits in the LoadShed's first slot
		synctest.Wait()
		require.Equal(t, 1, h.Waiting())
		normal := troupetest.Go(ctx, st, 2)
		assert.ErrorIs(t, (<-normal).Err, loadshed.ErrOverloaded, "Normal may use 1 slot only")
		urgent := troupetest.Go(high, st, 3)
		synctest.Wait()
		select {
		case r := <-urgent:
			t.Fatalf("the High request was not admitted: %+v", r)
		default:
		}

		h.Allow(2)
		got := map[int]bool{}
		for range 2 { // both callers run their calls: in either order
			req := h.Next(ctx)
			got[req.Value] = true
			req.Respond(req.Value * 10)
		}
		assert.Equal(t, map[int]bool{1: true, 3: true}, got)
		assert.Equal(t, 10, (<-first).Value)
		assert.Equal(t, 30, (<-urgent).Value)
	})
}

// spec: PS1 — under a steady overload, the lower a priority, the more of
// its calls are shed.
func TestPS1_UnderOverloadTheShedShareFallsWithPriority(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mock, h := troupetest.NewMock[int, int]()
		ls, err := loadshed.New(troupetest.NewSystem(t), mock, loadshed.Capacity(6), loadshed.KeepFor(loadshed.Normal, 2), loadshed.KeepFor(loadshed.High, 2))
		require.NoError(t, err)
		ctx := context.Background()
		prios := []loadshed.Priority{loadshed.Low, loadshed.Normal, loadshed.High}
		shed := map[loadshed.Priority]int{}
		for round := range 200 {
			// A burst of 9 calls, 3 of each priority, interleaved, against a
			// downstream that is busy until the burst is in.
			var futs []<-chan troupetest.Result[int]
			for i := range 9 {
				futs = append(futs, troupetest.Go(loadshed.WithPriority(ctx, prios[i%3]), ls, round))
				synctest.Wait()
			}
			for {
				if req := h.TryNext(); req != nil {
					req.Respond(0)
				} else if h.Waiting() > 0 {
					h.Allow(1)
				} else {
					break
				}
				synctest.Wait()
			}
			for i, f := range futs {
				if r := <-f; r.Err != nil {
					require.ErrorIs(t, r.Err, loadshed.ErrOverloaded)
					shed[prios[i%3]]++
				}
			}
		}
		// Per burst: Low may fill 2 slots, Normal 4, High all 6, and the
		// burst comes in as L N H L N H L N H: the 2nd and 3rd Low and the
		// 3rd Normal find no slot of theirs.
		assert.Equal(t, map[loadshed.Priority]int{loadshed.Low: 400, loadshed.Normal: 200}, shed)
	})
}

// spec: PS1, HR5 — kept slots that leave no slot for the lowest priority
// are a configuration error.
func TestPS1_KeptSlotsMustLeaveOne(t *testing.T) {
	mock, _ := troupetest.NewMock[int, int]()
	sys := troupetest.NewSystem(t)
	for _, opts := range [][]loadshed.Option{
		{loadshed.Capacity(3), loadshed.KeepFor(loadshed.High, 3)},
		{loadshed.Capacity(3), loadshed.KeepFor(loadshed.High, 2), loadshed.KeepFor(loadshed.Critical, 1)},
		{loadshed.Capacity(3), loadshed.KeepFor(loadshed.High, -1)},
	} {
		_, err := loadshed.New(sys, mock, opts...)
		troupetest.BadOption(t, err, "loadshed", "KeepFor")
		assert.ErrorIs(t, err, troupe.ErrBadConfig)
	}
	_, err := loadshed.New(sys, mock, loadshed.Capacity(3), loadshed.KeepFor(loadshed.High, 1), loadshed.KeepFor(loadshed.High, 1))
	assert.NoError(t, err, "two kept for one priority add up to 2 of 3")
}
