package troupeotel_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/stages"
	"github.com/troupe-go/troupe/stages/breaker"
	"github.com/troupe-go/troupe/stages/loadshed"
	"github.com/troupe-go/troupe/stages/retry"
	"github.com/troupe-go/troupe/stages/timeout"
	m "github.com/troupe-go/troupe/troupeotel"
	"github.com/troupe-go/troupe/troupetest"
)

// spec: OB2
func TestOB2_ScriptedStackRecordsExactMetrics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		sys := troupetest.NewSystem(t)
		obs, reader := newObserver(t)
		mock, h := troupetest.NewMock[int, int]()
		st, err := stages.Stack[int, int]().
			Observe(obs, "ocr-api").
			Limit(2).
			Timeout(time.Second).
			Retry(2, nil).
			LoadShed().
			Build(sys, mock)
		require.NoError(t, err)
		answer := func(v int, err error) {
			t.Helper()
			r := h.Next(ctx)
			require.NotNil(t, r)
			if err != nil {
				r.Fail(err)
			} else {
				r.Respond(v)
			}
		}

		// 1. A success.
		h.Allow(1)
		c := troupetest.Go(ctx, st, 1)
		answer(10, nil)
		require.NoError(t, (<-c).Err)
		// 2. A failure, retried once, then a success.
		h.Allow(2)
		c = troupetest.Go(ctx, st, 2)
		answer(0, errFlaky)
		answer(20, nil)
		require.NoError(t, (<-c).Err)
		// 3. No answer: the timeout fires at 1 s, and the retry stage
		// retries no more.
		h.Allow(1)
		c = troupetest.Go(ctx, st, 3)
		require.NotNil(t, h.Next(ctx)) // never answered
		assert.ErrorIs(t, (<-c).Err, timeout.ErrTimeout)
		synctest.Wait()
		// 4. One request waits in the load shedder for the mock's
		// readiness; the next is shed, and so are its two retries.
		c4 := troupetest.Go(ctx, st, 4)
		synctest.Wait()
		res := <-troupetest.Go(ctx, st, 5)
		assert.ErrorIs(t, res.Err, loadshed.ErrOverloaded)
		assert.ErrorIs(t, res.Err, retry.ErrExhausted)
		h.Allow(1)
		answer(40, nil)
		require.NoError(t, (<-c4).Err)
		// 5. A caller whose context is done is refused at the door.
		done, cancel := context.WithCancel(ctx)
		cancel()
		_, err = troupe.Do(done, st, 6)
		assert.ErrorIs(t, err, context.Canceled)
		synctest.Wait()

		got := collect(t, reader)
		assert.Equal(t, map[string]int64{
			"limit success": 3, "limit timeout": 1, "limit failure": 1,
			"timeout success": 3, "timeout timeout": 1, "timeout failure": 1,
			"retry success": 3, "retry timeout": 1, "retry failure": 1,
			// the load shedder sees each attempt: 2's first failed.
			"loadshed success": 3, "loadshed timeout": 1, "loadshed failure": 1,
		}, got.ints(t, "ocr-api", m.MetricCalls))
		assert.Equal(t, map[string]int64{
			"limit canceled": 1, "loadshed overloaded": 3,
		}, got.ints(t, "ocr-api", m.MetricRejected))
		assert.Equal(t, map[string]int64{"retry 1": 2, "retry 2": 1},
			got.ints(t, "ocr-api", m.MetricRetries))
		assert.Equal(t, map[string]int64{"timeout": 1}, got.ints(t, "ocr-api", m.MetricTimeouts))
		assert.Equal(t, map[string]int64{"loadshed": 3}, got.ints(t, "ocr-api", m.MetricShed))
		assert.Equal(t, map[string]int64{"loadshed": 5}, got.ints(t, "ocr-api", m.MetricAttempts))
		assert.Equal(t, map[string]int64{"limit": 0, "timeout": 0, "retry": 0, "loadshed": 0},
			got.ints(t, "ocr-api", m.MetricActiveCalls))
		// In the bubble only the timeout takes time: the call it timed
		// out was held by every stage until just past its deadline (a
		// response at the deadline itself would win), 1 s + 1 ns.
		assert.Equal(t, map[string]string{
			"limit success": "3 0", "limit timeout": "1 1.000000001", "limit failure": "1 0",
			"timeout success": "3 0", "timeout timeout": "1 1.000000001", "timeout failure": "1 0",
			"retry success": "3 0", "retry timeout": "1 1.000000001", "retry failure": "1 0",
			"loadshed success": "3 0", "loadshed timeout": "1 1.000000001", "loadshed failure": "1 0",
		}, got.hist(t, "ocr-api"))
		for _, name := range []string{m.MetricHedges, m.MetricFallbacks, m.MetricStateChanges, m.MetricLimit, m.MetricRestarts} {
			assert.NotContains(t, got, name)
		}
		require.NoError(t, st.Close(ctx))
	})
}

// spec: OB2
func TestOB2_BreakerOpeningIsCountedAsStateChanges(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		sys := troupetest.NewSystem(t)
		obs, reader := newObserver(t)
		fail := true
		api := actors.Func(func(context.Context, int) (int, error) {
			if fail {
				return 0, errFlaky
			}
			return 1, nil
		})
		st, err := stages.Stack[int, int]().
			Breaker(breaker.CountWindow(2), breaker.FailureRate(0.5), breaker.OpenDelay(time.Second), breaker.HalfOpenTrials(1)).
			Observe(obs, "p").
			Build(sys, api)
		require.NoError(t, err)
		for range 2 {
			_, err = troupe.Do(ctx, st, 0)
			assert.ErrorIs(t, err, errFlaky)
		}
		_, err = troupe.Do(ctx, st, 0)
		assert.ErrorIs(t, err, breaker.ErrOpen)
		synctest.Wait()
		got := collect(t, reader)
		assert.Equal(t, map[string]int64{"breaker closed open": 1}, got.ints(t, "p", m.MetricStateChanges))
		assert.Equal(t, map[string]int64{"breaker open": 1}, got.ints(t, "p", m.MetricRejected))

		time.Sleep(time.Second)
		synctest.Wait() // the open delay ended: half-open
		fail = false
		_, err = troupe.Do(ctx, st, 0)
		require.NoError(t, err)
		synctest.Wait()
		got = collect(t, reader)
		assert.Equal(t, map[string]int64{
			"breaker closed open": 1, "breaker open half-open": 1, "breaker half-open closed": 1,
		}, got.ints(t, "p", m.MetricStateChanges))
		assert.Equal(t, map[string]int64{"breaker failure": 2, "breaker success": 1},
			got.ints(t, "p", m.MetricCalls))
		assert.Equal(t, map[string]int64{"breaker open": 1}, got.ints(t, "p", m.MetricRejected))
		assert.Equal(t, map[string]int64{"breaker": 3}, got.ints(t, "p", m.MetricAttempts))
		require.NoError(t, st.Close(ctx))
	})
}

// spec: OB2
func TestOB2_RestartIsCounted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		sys := troupetest.NewSystem(t)
		obs, reader := newObserver(t)
		mock, h := troupetest.NewMock[int, int]()
		st, err := stages.Stack[int, int]().Buffer(4).Observe(obs, "p").Build(sys, mock)
		require.NoError(t, err)
		h.PanicOnReady("boom")
		_, err = troupe.Do(ctx, st, 1)
		assert.ErrorIs(t, err, troupe.ErrRestarted)
		synctest.Wait() // the supervisor restarts the stage
		h.Allow(1)
		c := troupetest.Go(ctx, st, 2)
		h.Next(ctx).Respond(2)
		require.NoError(t, (<-c).Err)
		synctest.Wait()
		got := collect(t, reader)
		assert.Equal(t, map[string]int64{"buffer": 1}, got.ints(t, "p", m.MetricRestarts))
		assert.Equal(t, map[string]int64{"buffer restarted": 1}, got.ints(t, "p", m.MetricRejected))
		assert.Equal(t, map[string]int64{"buffer panic": 1, "buffer success": 1}, got.ints(t, "p", m.MetricCalls))
		require.NoError(t, st.Close(ctx))
	})
}
