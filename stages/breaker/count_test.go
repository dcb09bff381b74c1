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
)

// The window slides: the oldest outcome leaves as each new one comes in.
// With the last 3 calls judged at 0.6, F ok ok F ok F opens at the sixth
// outcome (F ok F); counted from the start (3 in 6) it never would.
//
// spec: CB1, CB3
func TestCB1_ACountWindowJudgesTheLastNCalls(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := newRecorder()
		br, f := overFake(t, breaker.CountWindow(3), breaker.MinCalls(3), breaker.FailureRate(0.6),
			breaker.OpenDelay(10*time.Second), rec.option())
		start := time.Now()
		sec := func(s step) step { return slowly(time.Second, s) }
		require.NoError(t, run(br, sec(fail), sec(ok), sec(ok), sec(fail), sec(ok)), "the last call succeeded")
		assert.Equal(t, breaker.Snapshot{State: closed, Since: start, Calls: 3, Failures: 1, FailureRate: 1.0 / 3, ConsecutiveSuccesses: 1}, br.Snapshot(), "the window holds ok F ok")
		require.ErrorIs(t, run(br, sec(fail)), errDown, "the call that trips the breaker gets its own outcome")
		assert.Equal(t, []change{{closed, open, 6 * time.Second}}, rec.changes(), "opened by the sixth outcome, before its caller had it")
		assert.Equal(t, breaker.Snapshot{State: open, Since: start.Add(6 * time.Second), RetryAt: start.Add(16 * time.Second), Openings: 1}, br.Snapshot())
		assert.Equal(t, int64(6), f.calls.Load())
	})
}

// spec: CB1
func TestCB1_TheRatesWaitForTheMinimumNumberOfCalls(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		br, _ := overFake(t, breaker.CountWindow(10), breaker.MinCalls(5))
		require.ErrorIs(t, run(br, fail, fail, fail, fail), errDown)
		s := br.Snapshot()
		assert.Equal(t, closed, s.State, "4 failures in 4 calls, below the minimum of 5")
		assert.Equal(t, 4, s.Failures)
		require.ErrorIs(t, run(br, fail), errDown)
		assert.Equal(t, open, br.State(), "the fifth reaches the minimum")
	})
}

// A rate is a quotient: 3 failures in 10 calls meet a threshold of 0.3
// (3 > 0.3 * 10 in floating point); 2 in 10 do not.
//
// spec: CB1
func TestCB1_ARateThatMeetsItsThresholdExactlyOpens(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		br, _ := overFake(t, breaker.CountWindow(10), breaker.FailureRate(0.3))
		require.NoError(t, run(br, ok, ok, ok, ok, ok, ok, ok, ok))
		require.ErrorIs(t, run(br, fail, fail), errDown)
		assert.Equal(t, breaker.Snapshot{State: closed, Since: br.Snapshot().Since, Calls: 10, Failures: 2, FailureRate: 0.2, ConsecutiveFailures: 2}, br.Snapshot())
		require.ErrorIs(t, run(br, fail), errDown)
		assert.Equal(t, open, br.State(), "3 in the last 10")
	})
}

// A call is slow when it takes longer than the duration, from the call to
// its outcome: 1 s is not slower than 1 s; 2 s and 3 s are. Two slow in
// four successful calls meet a slow-call rate of 0.5.
//
// spec: CB1, CB3
func TestCB1_TheSlowCallRateOpensTheBreaker(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := newRecorder()
		br, _ := overFake(t, breaker.CountWindow(4), breaker.SlowCalls(time.Second, 0.5), rec.option())
		require.NoError(t, run(br, slowly(time.Second, ok), slowly(2*time.Second, ok), slowly(500*time.Millisecond, ok)))
		s := br.Snapshot()
		assert.Equal(t, [4]int{3, 0, 1, 0}, [4]int{s.Calls, s.Failures, s.Slow, s.InFlight})
		require.NoError(t, run(br, slowly(3*time.Second, ok)), "a slow success is a success to its caller")
		assert.Equal(t, []change{{closed, open, 6500 * time.Millisecond}}, rec.changes())
	})
}

var errNotFound = errors.New("not found")

// The classifier decides: here a 503 response is a failure and a "not
// found" error is not.
//
// spec: CB1
func TestCB1_TheClassifierSaysWhatAFailureIs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		isFailure := func(res int, err error) bool {
			return res >= 500 || err != nil && !errors.Is(err, errNotFound)
		}
		br, _ := overFake(t, breaker.CountWindow(4), breaker.Classify(isFailure))
		notFound, unavailable := step{err: errNotFound}, step{res: 503}
		out, err := troupe.Do(context.Background(), br, unavailable)
		require.NoError(t, err)
		assert.Equal(t, 503, out, "the response passes unchanged")
		require.ErrorIs(t, run(br, notFound, notFound), errNotFound)
		require.NoError(t, run(br, ok))
		s := br.Snapshot()
		assert.Equal(t, [3]int{4, 1, 0}, [3]int{s.Calls, s.Failures, s.Slow}, "503 notFound notFound ok")
		require.NoError(t, run(br, unavailable))
		assert.Equal(t, closed, br.State(), "notFound notFound ok 503: one in four")
		require.NoError(t, run(br, unavailable))
		assert.Equal(t, open, br.State(), "notFound ok 503 503: two in four")
	})
}
