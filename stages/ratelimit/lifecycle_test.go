package ratelimit_test

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
	"github.com/troupe-go/troupe/stages/ratelimit"
	"github.com/troupe-go/troupe/troupetest"
)

func TestPanicRestartKeepsTheRate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mock, h := troupetest.NewMock[int, int]()
		rl := newRL(t, mock, perSecond(1))
		ctx := context.Background()
		h.PanicOnReady("inner bug")
		r := <-troupetest.Go[int, int](ctx, rl, 1)
		assert.ErrorIs(t, r.Err, troupe.ErrRestarted)
		assert.True(t, rl.Limited(), "the unit was spent: a restart does not reset the rate")
		h.Allow(1)
		start := time.Now()
		c := troupetest.Go[int, int](ctx, rl, 2)
		req := h.Next(ctx)
		assert.Equal(t, time.Second, time.Since(start))
		req.Respond(20)
		assert.Equal(t, troupetest.Result[int]{Value: 20}, <-c)
	})
}

func TestCloseDrainsAtTheRate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := newRecorder()
		rl := newRL(t, rec.service(), perSecond(1))
		ctx := context.Background()
		ps := reserve(t, rl, 3)
		var outs []<-chan troupetest.Result[int]
		for i, p := range ps {
			outs = append(outs, troupetest.GoWith(ctx, p, i))
		}
		synctest.Wait()
		require.NoError(t, rl.Close(ctx))
		assert.Equal(t, 2*time.Second, rec.since(), "the queued requests drained, one per window")
		for _, o := range outs {
			assert.NoError(t, (<-o).Err)
		}
		_, err := rl.Reserve(ctx)
		assert.ErrorIs(t, err, troupe.ErrClosed)
	})
}

func TestCloseAbortedWhileLimitedAnswersTheQueue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := newRecorder()
		rl := newRL(t, rec.service(), perSecond(1))
		ctx := context.Background()
		ps := reserve(t, rl, 3)
		var outs []<-chan troupetest.Result[int]
		for i, p := range ps {
			outs = append(outs, troupetest.GoWith(ctx, p, i))
		}
		synctest.Wait()
		cctx, cancel := context.WithTimeout(ctx, 500*ms)
		defer cancel()
		assert.ErrorIs(t, rl.Close(cctx), context.DeadlineExceeded)
		var closed int
		for _, o := range outs {
			if err := (<-o).Err; errors.Is(err, troupe.ErrClosed) {
				closed++
			}
		}
		assert.Equal(t, 2, closed)
		assert.Len(t, rec.times(), 1)
	})
}

func TestNewStageOverInnerAndHost(t *testing.T) {
	sys := troupetest.NewSystem(t)
	_, err := ratelimit.New[int, int](sys, nil, perSecond(1))
	assert.ErrorIs(t, err, troupe.ErrBadConfig, "a nil inner service")
	f := actors.Func(func(_ context.Context, v int) (int, error) { return v, nil })
	rl, err := ratelimit.New[int, int](sys, f, perSecond(7), ratelimit.Capacity(3), ratelimit.Smooth(2))
	require.NoError(t, err)
	assert.Equal(t, perSecond(7), rl.Rate())
	assert.Equal(t, 3, rl.Stats().Capacity)
	assert.Equal(t, "ratelimit", rl.Name())
}
