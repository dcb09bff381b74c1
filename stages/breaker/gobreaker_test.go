package breaker_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe/stages/breaker"
	"github.com/troupe-go/troupe/troupetest"
)

// counts is the part of a snapshot gobreaker's Counts has.
func counts(br *breaker.Breaker[step, int]) breaker.Counts {
	s := br.Snapshot()
	return breaker.Counts{Calls: s.Calls, Failures: s.Failures, ConsecutiveFailures: s.ConsecutiveFailures, ConsecutiveSuccesses: s.ConsecutiveSuccesses}
}

// sony/gobreaker's TestDefaultCircuitBreaker, as a behaviour check:
// gobreaker's defaults (more than 5 failures in a row trip it, 60 s open,
// one trial that reopens it on failure) are ConsecutiveFailures(6),
// OpenDelay(60 s), HalfOpenTrials(1) and ReopenOnTrialFailure here, and
// the breaker goes through the same states with the same counts.
//
// spec: PP1
func TestGobreakersDefaultCircuitBreaker(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		br, _ := overFake(t, breaker.ConsecutiveFailures(6), breaker.OpenDelay(60*time.Second),
			breaker.HalfOpenTrials(1), breaker.ReopenOnTrialFailure())
		require.ErrorIs(t, run(br, fail, fail, fail, fail, fail), errDown)
		assert.Equal(t, breaker.Closed, br.State())
		assert.Equal(t, breaker.Counts{Calls: 5, Failures: 5, ConsecutiveFailures: 5}, counts(br))
		require.NoError(t, run(br, ok))
		assert.Equal(t, breaker.Counts{Calls: 6, Failures: 5, ConsecutiveSuccesses: 1}, counts(br))
		require.ErrorIs(t, run(br, fail), errDown)
		assert.Equal(t, breaker.Counts{Calls: 7, Failures: 6, ConsecutiveFailures: 1}, counts(br))

		require.ErrorIs(t, run(br, fail, fail, fail, fail, fail), errDown) // 6 in a row
		assert.Equal(t, breaker.Open, br.State())
		assert.Equal(t, breaker.Counts{}, counts(br))
		openErr(t, run(br, ok))
		openErr(t, run(br, fail))
		opened := time.Now()

		at(opened, 59*time.Second)
		assert.Equal(t, breaker.Open, br.State())
		at(opened, 60*time.Second) // over Timeout
		assert.Equal(t, breaker.HalfOpen, br.State())
		require.ErrorIs(t, run(br, fail), errDown)
		assert.Equal(t, breaker.Open, br.State(), "half-open to open")
		reopened := time.Now()
		at(reopened, 60*time.Second)
		assert.Equal(t, breaker.HalfOpen, br.State())
		require.NoError(t, run(br, ok))
		assert.Equal(t, breaker.Closed, br.State(), "half-open to closed")
		assert.Equal(t, breaker.Counts{}, counts(br))
	})
}

// sony/gobreaker's TestCustomCircuitBreaker, as a behaviour check: its
// settings (MaxRequests 3, Interval 30 s, Timeout 90 s, a ReadyToTrip of
// at least 3 requests and a failure ratio of 0.6) are HalfOpenTrials(3)
// with ReopenOnTrialFailure, ClearEvery, OpenDelay and TripWhen here.
//
// spec: PP1
func TestGobreakersCustomCircuitBreaker(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		trip := func(c breaker.Counts) bool {
			return c.Calls >= 3 && float64(c.Failures)/float64(c.Calls) >= 0.6
		}
		rec := newRecorder()
		br, _ := overFake(t, breaker.TripWhen(trip), breaker.ClearEvery(30*time.Second), breaker.OpenDelay(90*time.Second),
			breaker.HalfOpenTrials(3), breaker.ReopenOnTrialFailure(), rec.option())
		start := time.Now()
		for range 5 {
			require.NoError(t, run(br, ok))
			require.ErrorIs(t, run(br, fail), errDown)
		}
		assert.Equal(t, breaker.Closed, br.State())
		assert.Equal(t, breaker.Counts{Calls: 10, Failures: 5, ConsecutiveFailures: 1}, counts(br))

		at(start, 29*time.Second)
		require.NoError(t, run(br, ok))
		assert.Equal(t, breaker.Counts{Calls: 11, Failures: 5, ConsecutiveSuccesses: 1}, counts(br))
		at(start, 30*time.Second) // over Interval
		require.ErrorIs(t, run(br, fail), errDown)
		assert.Equal(t, breaker.Counts{Calls: 1, Failures: 1, ConsecutiveFailures: 1}, counts(br))

		require.NoError(t, run(br, ok))
		require.ErrorIs(t, run(br, fail), errDown) // 2 of 3 >= 0.6
		assert.Equal(t, breaker.Open, br.State())
		opened := time.Now()

		at(opened, 90*time.Second)
		assert.Equal(t, breaker.HalfOpen, br.State())
		require.NoError(t, run(br, ok, ok))
		assert.Equal(t, breaker.HalfOpen, br.State())
		assert.Equal(t, breaker.Counts{Calls: 2, ConsecutiveSuccesses: 2}, counts(br))
		third := troupetest.Go[step, int](context.Background(), br, slowly(100*time.Millisecond, ok))
		synctest.Wait()
		openErr(t, run(br, ok)) // over MaxRequests
		assert.Equal(t, troupetest.Result[int]{}, <-third)
		assert.Equal(t, breaker.Closed, br.State())
		assert.Equal(t, breaker.Counts{}, counts(br))
		synctest.Wait()
		var got []string
		for _, c := range rec.changes() {
			got = append(got, c.From.String()+">"+c.To.String())
		}
		assert.Equal(t, []string{"closed>open", "open>half-open", "half-open>closed"}, got)
	})
}
