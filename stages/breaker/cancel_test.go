package breaker_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/stages"
	"github.com/troupe-go/troupe/stages/breaker"
	"github.com/troupe-go/troupe/stages/timeout"
	"github.com/troupe-go/troupe/troupetest"
)

// A caller that gives up (cancels, or its own deadline passes) is not the
// service's fault: its call is not counted at all, with a window of one
// call that any failure would trip. A Timeout inside the breaker is the
// service being slow: that is a failure.
//
// spec: CB1
func TestCB1_TheCallersOwnCancellationIsNotCounted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fake{}
		sys := troupetest.NewSystem(t)
		st, err := stages.Stack[step, int]().Breaker(breaker.CountWindow(1)).Timeout(time.Minute).Build(sys, f.service())
		require.NoError(t, err)
		br, err := breaker.New[step, int](sys, f.service(), breaker.CountWindow(1))
		require.NoError(t, err)
		hang := slowly(time.Hour, ok)

		cctx, cancel := context.WithCancel(context.Background())
		c := troupetest.Go[step, int](cctx, br, hang)
		synctest.Wait()
		cancel()
		assert.ErrorIs(t, (<-c).Err, context.Canceled)
		dctx, stop := context.WithTimeout(context.Background(), time.Second)
		defer stop()
		_, err = troupe.Do(dctx, br, hang)
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		synctest.Wait()
		s := br.Snapshot()
		assert.Equal(t, closed, s.State)
		assert.Equal(t, [2]int{0, 0}, [2]int{s.Calls, s.InFlight}, "neither was counted")

		_, err = troupe.Do(context.Background(), st, hang)
		assert.ErrorIs(t, err, timeout.ErrTimeout)
		bs, _ := st.Stats("breaker")
		assert.Equal(t, open, bs.Detail.(breaker.Snapshot).State, "the timeout inside was counted")
	})
}

// A trial whose caller gave up gives its place to the next call, so the
// breaker cannot stay half-open for want of outcomes.
//
// spec: CB1
func TestCB1_ATrialWhoseCallerGaveUpGivesItsPlaceBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		br, f := overFake(t, breaker.CountWindow(1), breaker.HalfOpenTrials(1), breaker.OpenDelay(time.Second))
		require.ErrorIs(t, run(br, fail), errDown)
		time.Sleep(time.Second)
		cctx, cancel := context.WithCancel(context.Background())
		c := troupetest.Go[step, int](cctx, br, slowly(time.Hour, ok))
		synctest.Wait()
		assert.Equal(t, 1, br.Snapshot().InFlight)
		openErr(t, run(br, ok)) // the one trial is under way
		cancel()
		assert.ErrorIs(t, (<-c).Err, context.Canceled)
		synctest.Wait()
		assert.Equal(t, breaker.Snapshot{State: halfOpen, Since: br.Snapshot().Since, Openings: 1, Refused: 1}, br.Snapshot())
		require.NoError(t, run(br, ok), "the next call is the trial")
		assert.Equal(t, closed, br.State())
		assert.Equal(t, int64(3), f.calls.Load())
	})
}

// Regression: a call that ended the open delay (coming before the
// stage's timer) was admitted as a trial, then dropped from the calls the
// breaker counts by the very change it made; the breaker then stayed
// half-open. Who comes first at the delay's end is up to the scheduler,
// so the scenario runs many times.
//
// spec: CB1
func TestCB1_ATrialAdmittedAsTheOpenDelayEndsIsCounted(t *testing.T) {
	for range 20 {
		synctest.Test(t, func(t *testing.T) {
			br, h := overMock(t, breaker.CountWindow(2), breaker.HalfOpenTrials(1), breaker.OpenDelay(time.Second))
			trip(t, br, h)
			time.Sleep(time.Second)
			ctx := context.Background()
			c := troupetest.Go[int, int](ctx, br, 1)
			req := h.Next(ctx)
			assert.Equal(t, 1, br.Snapshot().InFlight)
			req.Respond(1)
			require.NoError(t, (<-c).Err)
			assert.Equal(t, closed, br.State())
		})
	}
}
