package breaker_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe/stages/breaker"
)

// A time window of 10 s in 10 buckets: an outcome leaves with its bucket.
// A failure at 0.9 s is in the bucket [0 s, 1 s), which leaves the window
// at 10 s exactly; a second failure just before then opens the breaker,
// at 10 s it does not.
//
// spec: CB1, CB3
func TestCB1_ATimeWindowForgetsOutcomesWithTheirBucket(t *testing.T) {
	opts := func(rec *recorder) []breaker.Option[int] {
		return []breaker.Option[int]{breaker.TimeWindow(10*time.Second, 10), breaker.MinCalls(2), rec.option()}
	}
	t.Run("within", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			rec := newRecorder()
			br, _ := overFake(t, opts(rec)...)
			at(rec.start, 900*time.Millisecond)
			require.ErrorIs(t, run(br, fail), errDown)
			at(rec.start, 10*time.Second-time.Nanosecond)
			require.ErrorIs(t, run(br, fail), errDown)
			assert.Equal(t, []change{{closed, open, 10*time.Second - time.Nanosecond}}, rec.changes())
		})
	})
	t.Run("after", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			rec := newRecorder()
			br, _ := overFake(t, opts(rec)...)
			at(rec.start, 900*time.Millisecond)
			require.ErrorIs(t, run(br, fail), errDown)
			at(rec.start, 10*time.Second-time.Nanosecond)
			assert.Equal(t, 1, br.Snapshot().Failures, "still in the window")
			at(rec.start, 10*time.Second)
			assert.Equal(t, breaker.Snapshot{State: closed, Since: rec.start, ConsecutiveFailures: 1}, br.Snapshot(), "gone with its bucket (the run of failures is not the window's)")
			require.ErrorIs(t, run(br, fail), errDown)
			assert.Equal(t, closed, br.State(), "one call in the window, below the minimum")
			assert.Empty(t, rec.changes())
			at(rec.start, 19*time.Second+999*time.Millisecond)
			require.ErrorIs(t, run(br, fail), errDown)
			assert.Equal(t, []change{{closed, open, 19*time.Second + 999*time.Millisecond}}, rec.changes(),
				"the failures at 10 s and 19.999 s share the window")
		})
	})
}

// Each consecutive opening waits twice as long as the one before, up to
// 5 s: open delays of 1, 2, 4, 5 s; after the breaker closes, 1 s again.
// Every change happens at its exact time, the end of an open delay by the
// stage's timer, with no call to notice it.
//
// spec: CB1, CB3
func TestCB1_TheOpenDelayGrowsAcrossConsecutiveOpenings(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := newRecorder()
		br, _ := overFake(t, breaker.CountWindow(1), breaker.HalfOpenTrials(1), breaker.OpenDelay(time.Second),
			breaker.GrowOpenDelay(2, 5*time.Second), rec.option())
		s := time.Second
		require.ErrorIs(t, run(br, fail), errDown)
		wantRetry := []time.Duration{1 * s, 3 * s, 7 * s, 12 * s}
		for i, retry := range wantRetry {
			assert.Equal(t, rec.start.Add(retry), openErr(t, run(br, ok)).RetryAt, "opening %d", i+1)
			assert.Equal(t, i+1, br.Snapshot().Openings)
			at(rec.start, retry-time.Nanosecond)
			assert.Equal(t, open, br.State())
			at(rec.start, retry)
			synctest.Wait()
			seen := rec.changes()
			assert.Equal(t, change{open, halfOpen, retry}, seen[len(seen)-1], "the timer, before any call")
			if i < len(wantRetry)-1 {
				require.ErrorIs(t, run(br, fail), errDown, "the trial fails")
			}
		}
		require.NoError(t, run(br, ok), "the last trial succeeds")
		require.ErrorIs(t, run(br, fail), errDown)
		assert.Equal(t, rec.start.Add(13*s), openErr(t, run(br, ok)).RetryAt, "the delay starts again from 1 s")
		assert.Equal(t, []change{
			{closed, open, 0},
			{open, halfOpen, 1 * s}, {halfOpen, open, 1 * s},
			{open, halfOpen, 3 * s}, {halfOpen, open, 3 * s},
			{open, halfOpen, 7 * s}, {halfOpen, open, 7 * s},
			{open, halfOpen, 12 * s}, {halfOpen, closed, 12 * s},
			{closed, open, 12 * s},
		}, rec.changes())
		assert.Equal(t, uint64(5), br.Snapshot().Refused)
	})
}
