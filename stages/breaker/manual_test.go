package breaker_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/stages/breaker"
	"github.com/troupe-go/troupe/troupetest"
)

// An operator opens, half-opens and resets the breaker by hand
// (failsafe-go's Open, HalfOpen and Close): an opened breaker refuses calls
// for its open delay, then lets its trials through; a half-opened one lets
// its trials decide; a reset one forgets its window and its consecutive
// openings. OnStateChange hears of each change, and a move to the state it
// is in changes nothing.
//
// spec: PP1
func TestAnOperatorOpensHalfOpensAndResetsTheBreaker(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := newRecorder()
		br, f := overFake(t, rec.option(), breaker.CountWindow(4), breaker.MinCalls(4),
			breaker.OpenDelay(time.Minute), breaker.GrowOpenDelay(2, time.Hour), breaker.HalfOpenTrials(1))
		start := time.Now()
		require.NoError(t, run(br, ok, fail, ok))

		br.Open()
		br.Open() // open already: the same opening
		assert.Equal(t, breaker.Open, br.State())
		oe := openErr(t, run(br, ok))
		assert.Equal(t, start.Add(time.Minute), oe.RetryAt, "for the open delay")
		assert.EqualValues(t, 3, f.calls.Load(), "refused before the service")

		at(start, time.Minute)
		assert.Equal(t, breaker.HalfOpen, br.State(), "its delay ends as any opening's")
		require.ErrorIs(t, run(br, fail), errDown)
		oe = openErr(t, run(br, ok))
		assert.Equal(t, start.Add(3*time.Minute), oe.RetryAt, "the failed trial opened it again, for a grown delay")

		br.Reset()
		assert.Equal(t, breaker.Closed, br.State())
		require.ErrorIs(t, run(br, fail, fail, fail), errDown)
		assert.Equal(t, 3, br.Snapshot().Failures)
		br.Reset() // closed already: the window is cleared
		assert.Zero(t, br.Snapshot().Calls)
		require.ErrorIs(t, run(br, fail, fail, fail, fail), errDown)
		oe = openErr(t, run(br, ok))
		assert.Equal(t, time.Now().Add(time.Minute), oe.RetryAt, "the reset forgot the consecutive openings: OpenDelay again")

		br.HalfOpen()
		br.HalfOpen() // half-open already: the same trials
		assert.Equal(t, breaker.HalfOpen, br.State())
		require.NoError(t, run(br, ok))
		assert.Equal(t, breaker.Closed, br.State(), "the trial closed it")

		synctest.Wait()
		var got []string
		for _, c := range rec.changes() {
			got = append(got, c.From.String()+">"+c.To.String())
		}
		assert.Equal(t, []string{"closed>open", "open>half-open", "half-open>open", "open>closed", "closed>open", "open>half-open", "half-open>closed"}, got)
	})
}

// ConsecutiveFailures opens the breaker after n failures in a row while
// closed, whatever the window's rate: gobreaker's default ReadyToTrip
// (more than 5 consecutive failures) is ConsecutiveFailures(6). A success
// starts the count over, and so does a change of state; the caller's own
// cancellation does not count. The snapshot gives the runs and the rates.
//
// spec: PP1
func TestConsecutiveFailuresOpenTheBreakerAsGobreakerDoes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		br, f := overFake(t, breaker.ConsecutiveFailures(6), breaker.OpenDelay(time.Minute), breaker.HalfOpenTrials(1))
		require.ErrorIs(t, run(br, fail, fail, fail, fail, fail), errDown)
		s := br.Snapshot()
		assert.Equal(t, 5, s.ConsecutiveFailures)
		assert.Equal(t, 1.0, s.FailureRate)
		require.NoError(t, run(br, ok))
		assert.Equal(t, 1, br.Snapshot().ConsecutiveSuccesses, "a success starts the run over")
		require.ErrorIs(t, run(br, fail, fail, fail, fail, fail), errDown)
		assert.Equal(t, breaker.Closed, br.State(), "5 in a row: not more than 5")
		require.ErrorIs(t, run(br, fail), errDown)
		assert.Equal(t, breaker.Open, br.State(), "the sixth in a row")
		assert.EqualValues(t, 12, f.calls.Load())
		assert.Zero(t, br.Snapshot().ConsecutiveFailures, "the opening started the count over")

		_, err := breaker.New[step, int](nil, nil, breaker.ConsecutiveFailures(0))
		troupetest.BadOption(t, err, "breaker", "ConsecutiveFailures")
	})
}

// Exclude leaves outcomes out of the counts (gobreaker's IsExcluded): a
// not-found answer counts neither as a failure nor as a success, in the
// window, the trials and the runs; a panic in it is the call's outcome.
//
// spec: PP1
func TestExcludedOutcomesCountNeitherWay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		errNotFound := errors.New("not found")
		notFound := step{err: errNotFound}
		br, _ := overFake(t, breaker.CountWindow(3), breaker.MinCalls(3), breaker.FailureRate(1),
			breaker.Exclude(func(_ int, err error) bool { return errors.Is(err, errNotFound) }))
		require.ErrorIs(t, run(br, fail, notFound, fail, notFound), errNotFound)
		s := br.Snapshot()
		assert.Equal(t, 2, s.Calls, "the not-founds are not in the window")
		assert.Equal(t, 2, s.ConsecutiveFailures, "nor do they break the run")
		require.ErrorIs(t, run(br, fail), errDown)
		assert.Equal(t, breaker.Open, br.State())

		boom, _ := overFake(t, breaker.Exclude(func(int, error) bool { panic("a bug in Exclude") }))
		err := run(boom, ok)
		assert.ErrorIs(t, err, troupe.ErrPanic)
		assert.Zero(t, boom.Snapshot().Calls)

		_, err = breaker.New[step, int](troupetest.NewSystem(t), (&fake{}).service(), breaker.Option[int](breaker.Exclude(func(string, error) bool { return false })))
		troupetest.BadOption(t, err, "breaker", "Exclude")
		_, err = breaker.New[step, int](troupetest.NewSystem(t), (&fake{}).service(), breaker.Exclude[int](nil))
		troupetest.BadOption(t, err, "breaker", "Exclude")
	})
}

// ReopenOnTrialFailure: the first failed trial opens the breaker again at
// once (gobreaker's half-open), without waiting for the trials still
// under way; k trials that succeed close it (a success threshold).
//
// spec: PP1
func TestAFailedTrialReopensTheBreakerAtOnceWhenAsked(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		br, _ := overFake(t, breaker.ConsecutiveFailures(1), breaker.OpenDelay(time.Second),
			breaker.HalfOpenTrials(3), breaker.ReopenOnTrialFailure())
		require.ErrorIs(t, run(br, fail), errDown)
		time.Sleep(time.Second)
		assert.Equal(t, breaker.HalfOpen, br.State())
		slowOK := troupetest.Go[step, int](context.Background(), br, slowly(time.Minute, ok))
		synctest.Wait()
		require.ErrorIs(t, run(br, fail), errDown)
		assert.Equal(t, breaker.Open, br.State(), "the failed trial reopened it, the slow one still under way")
		<-slowOK

		time.Sleep(time.Second)
		require.NoError(t, run(br, ok, ok))
		assert.Equal(t, breaker.HalfOpen, br.State(), "2 of 3 trials in")
		require.NoError(t, run(br, ok))
		assert.Equal(t, breaker.Closed, br.State(), "3 trials succeeded")
	})
}

// OnTransition is given every change with the counts of the state left,
// as they were when it changed (what gobreaker's ReadyToTrip saw).
//
// spec: PP1
func TestTheTransitionCallbackReceivesTheCounts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var got []breaker.Transition
		br, _ := overFake(t, breaker.ConsecutiveFailures(3), breaker.OpenDelay(time.Second), breaker.HalfOpenTrials(1),
			breaker.OnTransition(func(tr breaker.Transition) { got = append(got, tr) }))
		start := time.Now()
		require.ErrorIs(t, run(br, ok, fail, fail, fail), errDown)
		time.Sleep(time.Second)
		require.NoError(t, run(br, ok))
		synctest.Wait()
		assert.Equal(t, []breaker.Transition{
			{From: breaker.Closed, To: breaker.Open, At: start, Counts: breaker.Counts{Calls: 4, Failures: 3, ConsecutiveFailures: 3}},
			{From: breaker.Open, To: breaker.HalfOpen, At: start.Add(time.Second)},
			{From: breaker.HalfOpen, To: breaker.Closed, At: start.Add(time.Second), Counts: breaker.Counts{Calls: 1, ConsecutiveSuccesses: 1}},
		}, got)
		_, err := breaker.New[step, int](troupetest.NewSystem(t), (&fake{}).service(), breaker.OnTransition(nil))
		troupetest.BadOption(t, err, "breaker", "OnTransition")
	})
}

// ClearEvery clears the counts of a closed breaker at every multiple of
// its interval (gobreaker's Interval): failures on either side of a
// boundary do not add up.
//
// spec: PP1
func TestClearEveryForgetsTheCountsAtEachInterval(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		br, _ := overFake(t, breaker.ConsecutiveFailures(3), breaker.ClearEvery(10*time.Second))
		start := time.Now()
		at(start, 9*time.Second)
		require.ErrorIs(t, run(br, fail, fail), errDown)
		assert.Equal(t, 2, br.Snapshot().ConsecutiveFailures)
		at(start, 10*time.Second)
		s := br.Snapshot()
		assert.Zero(t, s.Calls, "cleared at 10 s")
		assert.Zero(t, s.ConsecutiveFailures)
		require.ErrorIs(t, run(br, fail, fail), errDown)
		assert.Equal(t, breaker.Closed, br.State(), "2 and 2 across the boundary: not 3 in a row")
		at(start, 25*time.Second)
		require.ErrorIs(t, run(br, fail), errDown)
		assert.Equal(t, 1, br.Snapshot().Calls, "cleared at 20 s, the last multiple")
		require.ErrorIs(t, run(br, fail, fail), errDown)
		assert.Equal(t, breaker.Open, br.State())

		_, err := breaker.New[step, int](troupetest.NewSystem(t), (&fake{}).service(), breaker.ClearEvery(0))
		troupetest.BadOption(t, err, "breaker", "ClearEvery")
	})
}

// JitterOpenDelay spreads the open delays at random within the ratio, so
// that breakers that opened together do not all retry at one instant.
//
// spec: PP1
func TestJitterSpreadsTheOpenDelay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		seen := map[time.Time]bool{}
		for range 20 {
			br, _ := overFake(t, breaker.ConsecutiveFailures(1), breaker.OpenDelay(10*time.Second), breaker.JitterOpenDelay(0.2))
			require.ErrorIs(t, run(br, fail), errDown)
			oe := openErr(t, run(br, ok))
			wait := time.Until(oe.RetryAt)
			assert.GreaterOrEqual(t, wait, 8*time.Second)
			assert.LessOrEqual(t, wait, 12*time.Second)
			seen[oe.RetryAt] = true
		}
		assert.Greater(t, len(seen), 1, "twenty breakers that opened at one instant do not all retry at one")
		_, err := breaker.New[step, int](troupetest.NewSystem(t), (&fake{}).service(), breaker.JitterOpenDelay(1))
		troupetest.BadOption(t, err, "breaker", "JitterOpenDelay")
	})
}

// TripWhen is gobreaker's ReadyToTrip: after each failure in the closed
// state, a function of the counts may open the breaker; a panic in it is
// the failed call's outcome, and the breaker stays closed.
//
// spec: PP1
func TestATripFunctionOfTheCountsOpensTheBreaker(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var seen []breaker.Counts
		trip := func(c breaker.Counts) bool {
			seen = append(seen, c)
			return c.Failures >= 3 && c.Calls >= 5
		}
		br, _ := overFake(t, breaker.TripWhen(trip))
		require.ErrorIs(t, run(br, fail, fail, fail), errDown)
		assert.Equal(t, breaker.Closed, br.State(), "3 failures in 3 calls: not 5 calls yet")
		require.NoError(t, run(br, ok))
		require.ErrorIs(t, run(br, fail), errDown)
		assert.Equal(t, breaker.Open, br.State())
		assert.Equal(t, []breaker.Counts{
			{Calls: 1, Failures: 1, ConsecutiveFailures: 1},
			{Calls: 2, Failures: 2, ConsecutiveFailures: 2},
			{Calls: 3, Failures: 3, ConsecutiveFailures: 3},
			{Calls: 5, Failures: 4, ConsecutiveFailures: 1},
		}, seen, "asked after each failure, with the counts")

		boom, _ := overFake(t, breaker.TripWhen(func(breaker.Counts) bool { panic("a bug in TripWhen") }))
		err := run(boom, fail)
		assert.ErrorIs(t, err, troupe.ErrPanic)
		assert.ErrorIs(t, err, errDown, "the panic joins the call's own error")
		assert.Equal(t, breaker.Closed, boom.State())
		_, err = breaker.New[step, int](troupetest.NewSystem(t), (&fake{}).service(), breaker.TripWhen(nil))
		troupetest.BadOption(t, err, "breaker", "TripWhen")
	})
}
