package hedge_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/stages/hedge"
	"github.com/troupe-go/troupe/troupetest"
)

// spec: H1, CORE1, CORE6
func TestH1_CallerCancellationEndsEveryAttempt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		x, h := overMock(t, hedge.Delay(100*ms), hedge.MaxHedges(2), hedge.NoBudget())
		h.Allow(10)
		ctx, cancel := context.WithCancel(bg)
		got := troupetest.Go(ctx, x, 1)
		orig := next(t, h)
		time.Sleep(100 * ms)
		hedged := next(t, h)
		cancel()
		assert.Equal(t, troupetest.Result[int]{Err: context.Canceled}, <-got)
		synctest.Wait()
		assert.ErrorIs(t, orig.Ctx.Err(), context.Canceled)
		assert.ErrorIs(t, hedged.Ctx.Err(), context.Canceled)
		assert.Equal(t, 0, x.Counts().Sessions, "the session ended with its attempts")
		assert.Equal(t, 0, x.Stats().Used)
		time.Sleep(time.Second)
		none(t, h, "no second hedge for a caller who left")
		assert.Equal(t, 8, h.Allowed())
	})
}

// spec: H1, CORE1
func TestH1_CallerCancellationWhileTheOriginalWaitsForAUnit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		x, h := overMock(t, hedge.Delay(100*ms), hedge.NoBudget())
		ctx, cancel := context.WithCancel(bg)
		got := troupetest.Go(ctx, x, 1)
		synctest.Wait()
		assert.Equal(t, 1, h.Waiting(), "the original waits for a unit")
		cancel()
		assert.Equal(t, troupetest.Result[int]{Err: context.Canceled}, <-got)
		synctest.Wait()
		assert.Equal(t, 0, h.Waiting(), "the wait was taken back")
		assert.Equal(t, 0, x.Counts().Sessions)
		assert.Equal(t, 0, x.Stats().Used)
		h.Allow(1)
		time.Sleep(time.Second)
		none(t, h, "nothing is sent for it")
		assert.Equal(t, 1, h.Allowed())

		// The stage takes requests again.
		got = troupetest.Go(bg, x, 2)
		next(t, h).Respond(20)
		assert.Equal(t, troupetest.Result[int]{Value: 20}, <-got)
	})
}

// spec: H1, HR2
func TestHR2_CloseDrainsTheRequestsInFlight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		x, h := overMock(t, hedge.Delay(100*ms), hedge.NoBudget())
		h.Allow(2)
		got := troupetest.Go(bg, x, 1)
		orig := next(t, h)
		closed := make(chan error, 1)
		go func() { closed <- x.Close(bg) }()
		synctest.Wait()
		_, err := x.Reserve(bg)
		assert.ErrorIs(t, err, troupe.ErrClosed, "a closing stage takes nothing new")
		time.Sleep(100 * ms)
		hedged := next(t, h) // the request in flight is still hedged
		hedged.Respond(2)
		assert.Equal(t, troupetest.Result[int]{Value: 2}, <-got)
		assert.NoError(t, <-closed, "drained")
		assert.ErrorIs(t, orig.Ctx.Err(), context.Canceled)
	})
}

// spec: H1, HR2
func TestHR2_CloseAnswersWhatItCouldNotDrainAndCancelsItsAttempts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		x, h := overMock(t, hedge.Delay(100*ms), hedge.NoBudget())
		h.Allow(2)
		start := time.Now()
		got := troupetest.Go(bg, x, 1)
		orig := next(t, h)
		time.Sleep(100 * ms)
		hedged := next(t, h)
		ctx, cancel := context.WithTimeout(bg, time.Second)
		defer cancel()
		err := x.Close(ctx)
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		r := <-got
		assert.ErrorIs(t, r.Err, troupe.ErrClosed)
		assert.Equal(t, 1100*ms, time.Since(start))
		assert.ErrorIs(t, orig.Ctx.Err(), context.Canceled)
		assert.ErrorIs(t, hedged.Ctx.Err(), context.Canceled)
		assert.Equal(t, 0, h.Waiting())
	})
}

// spec: H1, HR1
func TestHR1_APanicInFinalOrCloneIsTheRequestsOutcome(t *testing.T) {
	for _, c := range []struct {
		where string
		opt   hedge.Option[int, int]
	}{
		{"hedge: Final", hedge.Final[int](func(res int, _ error) bool {
			if res == 13 {
				panic("classifier bug")
			}
			return true
		})},
		{"hedge: Clone", hedge.Clone[int, int](func(req int) int {
			if req == 13 {
				panic("copy bug")
			}
			return req
		})},
	} {
		t.Run(c.where, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				x, h := overMock(t, hedge.Delay(100*ms), hedge.NoBudget(), c.opt)
				h.Allow(10)
				got := troupetest.Go(bg, x, 13)
				orig := next(t, h)
				if c.where == "hedge: Final" {
					orig.Respond(13)
				} else {
					time.Sleep(100 * ms) // the copy for the hedge panics
					synctest.Wait()
					assert.ErrorIs(t, orig.Ctx.Err(), context.Canceled, "the original is cancelled")
				}
				r := <-got
				var perr *troupe.PanicError
				require.ErrorAs(t, r.Err, &perr)
				assert.Equal(t, c.where, perr.Where)
				assert.Equal(t, 0, x.Counts().Sessions)

				got = troupetest.Go(bg, x, 4)
				next(t, h).Respond(4)
				assert.Equal(t, troupetest.Result[int]{Value: 4}, <-got, "the stage goes on serving")
				require.NoError(t, x.Close(bg))
			})
		})
	}
}

// spec: HR1, HR3, CORE6
func TestHR3_AHedgeWhoseInnerReadinessPanicsAnswersTheRequestOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		x, h := overMock(t, hedge.Delay(100*ms), hedge.NoBudget())
		h.Allow(1)
		ctx, cancel := context.WithTimeout(bg, time.Hour)
		defer cancel()
		start := time.Now()
		got := troupetest.Go(ctx, x, 1)
		orig := next(t, h)
		h.PanicOnReady("readiness bug") // the hedge's reservation panics
		r := <-got
		assert.ErrorIs(t, r.Err, troupe.ErrRestarted)
		assert.ErrorIs(t, r.Err, troupe.ErrPanic)
		assert.Equal(t, 100*ms, time.Since(start), "at once, at the hedge's time")
		synctest.Wait()
		assert.ErrorIs(t, orig.Ctx.Err(), context.Canceled)

		h.Allow(1)
		got = troupetest.Go(bg, x, 2)
		next(t, h).Respond(20)
		assert.Equal(t, troupetest.Result[int]{Value: 20}, <-got, "the restarted stage serves")
		require.NoError(t, x.Close(bg))
	})
}

// spec: H1, CORE7, EG4
func TestCORE7_ABrokenInnerServiceClosesTheStage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		x, h := overMock(t, hedge.Delay(100*ms), hedge.NoBudget())
		h.Allow(1)
		got := troupetest.Go(bg, x, 1)
		orig := next(t, h)
		h.Break(nil)
		time.Sleep(time.Second) // the hedge was due, met the broken service, and did not go
		_, err := x.Reserve(bg)
		assert.ErrorIs(t, err, troupe.ErrClosed)
		assert.ErrorIs(t, err, troupetest.ErrBroken, "the readiness error itself")
		assert.NoError(t, orig.Ctx.Err(), "the original, sent before the break, goes on")
		assert.Zero(t, h.Waiting())
		orig.Respond(10)
		assert.Equal(t, troupetest.Result[int]{Value: 10}, <-got, "and its outcome is the request's")
		require.NoError(t, x.Close(bg))
	})
}

// spec: EG12
func TestAPermanentErrorEndsAHedgedRequestAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		x, h := overMock(t, hedge.Delay(100*ms), hedge.MaxHedges(2), hedge.NoBudget())
		h.Allow(3)
		got := troupetest.Go(bg, x, 1)
		orig := next(t, h)
		time.Sleep(100 * ms)
		hedged := next(t, h)
		refused := errors.New("400: no attempt will do better")
		hedged.Fail(troupe.Permanent(refused))
		r := <-got
		assert.ErrorIs(t, r.Err, refused, "the permanent error is the request's outcome at once")
		assert.ErrorIs(t, r.Err, troupe.ErrPermanent)
		synctest.Wait()
		assert.ErrorIs(t, orig.Ctx.Err(), context.Canceled, "the original is cancelled")
		time.Sleep(time.Second)
		assert.EqualValues(t, 2, h.Calls(), "and no further hedge goes")
		require.NoError(t, x.Close(bg))
	})
}
