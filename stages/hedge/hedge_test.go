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

var err503 = errors.New("503")

// spec: H1
func TestH1_NoHedgeWhenTheOriginalAnswersBeforeTheDelay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		x, h := overMock(t, hedge.Delay(100*ms), hedge.NoBudget())
		h.Allow(10)
		got := troupetest.Go(bg, x, 1)
		orig := next(t, h)
		time.Sleep(100*ms - time.Nanosecond)
		orig.Respond(10)
		assert.Equal(t, troupetest.Result[int]{Value: 10}, <-got)
		time.Sleep(time.Second)
		none(t, h, "no hedge after the original answered")
		assert.Equal(t, int64(1), h.Calls())
		assert.Equal(t, 9, h.Allowed(), "one unit spent")
		assert.Equal(t, hedge.Counts{Budget: -1}, x.Counts())
	})
}

// spec: H1
func TestH1_AHedgeIsSentAtTheDelayThroughTheInnerReadinessPath(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		x, h := overMock(t, hedge.Delay(100*ms), hedge.NoBudget())
		h.Allow(1) // the original's unit only
		start := time.Now()
		got := troupetest.Go(bg, x, 7)
		orig := next(t, h)
		assert.Equal(t, 7, orig.Value)

		time.Sleep(100*ms - time.Nanosecond)
		synctest.Wait()
		assert.Equal(t, 0, h.Waiting(), "nothing asked before the delay")
		time.Sleep(time.Nanosecond)
		synctest.Wait()
		assert.Equal(t, 1, h.Waiting(), "at the delay the hedge asks the inner service for a unit")
		none(t, h, "and waits for it: no unit, no copy")
		assert.Equal(t, uint64(0), x.Counts().Hedges)

		// While the hedge waits for a unit, the stage takes no new request.
		other := troupetest.Go(bg, x, 8)
		synctest.Wait()
		assert.Equal(t, 1, x.Stats().Queued, "the next request waits in the stage's mailbox")

		time.Sleep(50 * ms)
		h.Allow(1)
		hedged := next(t, h)
		assert.Equal(t, 7, hedged.Value, "the same request, sent again")
		assert.Equal(t, 150*ms, time.Since(start), "sent when the unit came")
		assert.Equal(t, uint64(1), x.Counts().Hedges)
		assert.Equal(t, 1, h.Waiting(), "now the next request's original waits for a unit")

		hedged.Respond(70)
		assert.Equal(t, troupetest.Result[int]{Value: 70}, <-got)
		assert.ErrorIs(t, orig.Ctx.Err(), context.Canceled, "the loser's context is cancelled")
		h.Allow(1)
		next(t, h).Respond(80)
		assert.Equal(t, troupetest.Result[int]{Value: 80}, <-other)
	})
}

// spec: H1, CORE6
func TestH1_TheFirstSuccessWinsAndTheLoserIsCancelled(t *testing.T) {
	for _, hedgeWins := range []bool{true, false} {
		synctest.Test(t, func(t *testing.T) {
			x, h := overMock(t, hedge.Delay(100*ms), hedge.NoBudget())
			h.Allow(2)
			got := troupetest.Go(bg, x, 1)
			orig := next(t, h)
			time.Sleep(100 * ms)
			hedged := next(t, h)
			time.Sleep(10 * ms)
			winner, loser, want := hedged, orig, 2
			if !hedgeWins {
				winner, loser, want = orig, hedged, 1
			}
			pending(t, got, "both attempts run")
			assert.Nil(t, loser.Ctx.Err())
			winner.Respond(want)
			assert.Equal(t, troupetest.Result[int]{Value: want}, <-got)
			assert.ErrorIs(t, loser.Ctx.Err(), context.Canceled, "the loser's context is cancelled before the caller has its outcome")
			if hedgeWins {
				// (The original's work runs on the caller's goroutine, whose
				// work context the runtime stops once the outcome is in.)
				assert.NoError(t, winner.Ctx.Err(), "the winner's is not")
			}
			loser.Respond(99) // too late: discarded
			synctest.Wait()
			pending(t, got, "the caller had one outcome, and only one")
			won := uint64(0)
			if hedgeWins {
				won = 1
			}
			assert.Equal(t, hedge.Counts{Hedges: 1, Won: won, Budget: -1}, x.Counts())
			assert.Equal(t, 0, x.Stats().Used, "the request's slot is free")
			assert.Equal(t, int64(2), h.Calls())
		})
	}
}

// spec: H1
func TestH1_AFailedOriginalWaitsForTheRunningHedge(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		x, h := overMock(t, hedge.Delay(100*ms), hedge.NoBudget())
		h.Allow(2)
		start := time.Now()
		got := troupetest.Go(bg, x, 1)
		orig := next(t, h)
		time.Sleep(100 * ms)
		hedged := next(t, h)
		time.Sleep(10 * ms)
		orig.Fail(err503)
		pending(t, got, "a failure waits for the hedge in flight")
		assert.NoError(t, hedged.Ctx.Err())
		time.Sleep(20 * ms)
		hedged.Respond(2)
		assert.Equal(t, troupetest.Result[int]{Value: 2}, <-got)
		assert.Equal(t, 130*ms, time.Since(start))
		assert.Equal(t, hedge.Counts{Hedges: 1, Won: 1, Budget: -1}, x.Counts())
	})
}

// spec: H1
func TestH1_WhenEveryAttemptFailsTheLastFailureIsTheOutcome(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		x, h := overMock(t, hedge.Delay(100*ms), hedge.NoBudget())
		h.Allow(2)
		got := troupetest.Go(bg, x, 1)
		orig := next(t, h)
		time.Sleep(100 * ms)
		hedged := next(t, h)
		errLast := errors.New("504")
		hedged.Fail(err503)
		pending(t, got, "the original still runs")
		orig.Fail(errLast)
		assert.Equal(t, troupetest.Result[int]{Err: errLast}, <-got)
		assert.Equal(t, hedge.Counts{Hedges: 1, Won: 0, Budget: -1}, x.Counts())
	})
}

// spec: H1
func TestH1_AFailureBeforeTheDelayIsTheOutcomeAtOnceAndNothingIsHedged(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		x, h := overMock(t, hedge.Delay(100*ms), hedge.NoBudget())
		h.Allow(2)
		start := time.Now()
		got := troupetest.Go(bg, x, 1)
		time.Sleep(30 * ms)
		next(t, h).Fail(err503)
		assert.Equal(t, troupetest.Result[int]{Err: err503}, <-got)
		assert.Equal(t, 30*ms, time.Since(start))
		time.Sleep(time.Second)
		none(t, h, "a failure is no reason to hedge")
		assert.Equal(t, 1, h.Allowed())
	})
}

// spec: H1
func TestH1_FinalDecidesWhichOutcomeEndsTheRequest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		errNotFound := errors.New("404")
		final := hedge.Final[int](func(_ int, err error) bool { return err == nil || errors.Is(err, errNotFound) })
		x, h := overMock(t, hedge.Delay(100*ms), hedge.NoBudget(), final)
		h.Allow(2)
		got := troupetest.Go(bg, x, 1)
		orig := next(t, h)
		time.Sleep(100 * ms)
		hedged := next(t, h)
		hedged.Fail(errNotFound)
		assert.Equal(t, troupetest.Result[int]{Err: errNotFound}, <-got, "a final error wins")
		assert.ErrorIs(t, orig.Ctx.Err(), context.Canceled)
		assert.Equal(t, hedge.Counts{Hedges: 1, Won: 1, Budget: -1}, x.Counts())
	})
}

// spec: H1
func TestH1_TheCapOnExtraAttempts(t *testing.T) {
	for _, max := range []int{1, 3} {
		synctest.Test(t, func(t *testing.T) {
			opts := []hedge.Option[int, int]{hedge.Delay(100 * ms), hedge.NoBudget()}
			if max != 1 {
				opts = append(opts, hedge.MaxHedges(max))
			}
			x, h := overMock(t, opts...)
			h.Allow(10)
			start := time.Now()
			got := troupetest.Go(bg, x, 1)
			reqs := []*troupetest.Request[int, int]{next(t, h)}
			for k := 1; k <= max; k++ {
				time.Sleep(100 * ms)
				r := next(t, h)
				assert.Equal(t, time.Duration(k)*100*ms, time.Since(start), "hedge %d, a delay after the attempt before it", k)
				reqs = append(reqs, r)
			}
			time.Sleep(time.Second)
			none(t, h, "no hedge beyond the cap")
			assert.Equal(t, int64(max+1), h.Calls())
			assert.Equal(t, uint64(max), x.Counts().Hedges)

			reqs[1].Respond(11)
			assert.Equal(t, troupetest.Result[int]{Value: 11}, <-got)
			for i, r := range reqs {
				if i == 1 {
					assert.NoError(t, r.Ctx.Err())
				} else {
					assert.ErrorIs(t, r.Ctx.Err(), context.Canceled, "attempt %d lost", i)
				}
			}
		})
	}
}

// spec: H1, API5
func TestH1_BuilderStatsAndName(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mock, h := troupetest.NewMock[int, int]()
		sys := troupetest.NewSystem(t)
		st, err := troupe.NewBuilder[int, int]().Layer(hedge.Layer[int, int](hedge.Delay(10*ms))).Build(sys, mock)
		require.NoError(t, err)
		h.Allow(1)
		got := troupetest.Go(bg, st, 3)
		next(t, h).Respond(30)
		assert.Equal(t, troupetest.Result[int]{Value: 30}, <-got)
		stats := st.Stages()
		require.Len(t, stats, 1)
		assert.Equal(t, "hedge", stats[0].Name)
		assert.Equal(t, hedge.Counts{Budget: 0}, stats[0].Detail, "one request affords no hedge at the default ratio")
		require.NoError(t, st.Close(bg))
	})
}
