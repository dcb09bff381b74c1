package stages_test

import (
	"context"
	"strings"
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
	"github.com/troupe-go/troupe/troupetest"
)

// spec: OB1
func TestOB1_ScriptedStackReportsExactEventsPerStage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		sys := troupetest.NewSystem(t)
		rec := &recorder{}
		mock, h := troupetest.NewMock[int, int]()
		st, err := stages.Stack[int, int]().
			Observe(rec, "ocr-api").
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
		// 3. No answer: the timeout fires at 1 s; the retry stage sees the
		// attempt end with the deadline and retries no more.
		h.Allow(1)
		start := time.Now()
		c = troupetest.Go(ctx, st, 3)
		require.NotNil(t, h.Next(ctx)) // never answered
		res := <-c
		assert.ErrorIs(t, res.Err, timeout.ErrTimeout)
		assert.Equal(t, time.Second+time.Nanosecond, time.Since(start)) // a response at the deadline itself would win
		synctest.Wait()
		// 4. One request waits in the load shedder for the mock's
		// readiness; the next is shed, and so are its two retries.
		c4 := troupetest.Go(ctx, st, 4)
		synctest.Wait()
		res = <-troupetest.Go(ctx, st, 5)
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

		assert.Equal(t, []string{
			"accepted", "finished:success", // 1
			"accepted", "finished:success", // 2
			"accepted", "finished:timeout", // 3
			"accepted", "accepted", "finished:failure", "finished:success", // 4 (and 5, shed below)
			"rejected:canceled", // 5
		}, rec.seq("limit"))
		assert.Equal(t, []string{
			"accepted", "finished:success",
			"accepted", "finished:success",
			"accepted", "timed_out", "finished:timeout",
			"accepted", "accepted", "finished:failure", "finished:success",
		}, rec.seq("timeout"))
		assert.Equal(t, []string{
			"accepted", "finished:success",
			"accepted", "retried:1", "finished:success",
			"accepted", "finished:timeout",
			"accepted", "accepted", "retried:1", "retried:2", "finished:failure", "finished:success",
		}, rec.seq("retry"))
		assert.Equal(t, []string{
			"accepted", "started", "finished:success",
			"accepted", "started", "finished:failure", "accepted", "started", "finished:success",
			"accepted", "started", "finished:timeout",
			"accepted", // 4 waits for the mock
			"shed", "rejected:overloaded", "shed", "rejected:overloaded", "shed", "rejected:overloaded",
			"started", "finished:success",
		}, rec.seq("loadshed"))
		assertCallContexts(t, rec.events())
		for _, ev := range rec.events() {
			assert.Equal(t, "ocr-api", ev.Pipeline)
			assert.Equal(t, strings.SplitN(ev.Stage, "-", 2)[0], ev.StageKind)
		}
		require.NoError(t, st.Close(ctx))
	})
}

// spec: OB1
func TestOB1_BreakerTransitionsAndRefusals(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		sys := troupetest.NewSystem(t)
		rec := &recorder{}
		fail := true
		api := actors.Func(func(context.Context, int) (int, error) {
			if fail {
				return 0, errFlaky
			}
			return 1, nil
		})
		st, err := stages.Stack[int, int]().
			Breaker(breaker.CountWindow(2), breaker.FailureRate(0.5), breaker.OpenDelay(time.Second), breaker.HalfOpenTrials(1)).
			Observe(rec, "p").
			Build(sys, api)
		require.NoError(t, err)
		for range 2 {
			_, err = troupe.Do(ctx, st, 0)
			assert.ErrorIs(t, err, errFlaky)
		}
		_, err = troupe.Do(ctx, st, 0)
		assert.ErrorIs(t, err, breaker.ErrOpen)
		time.Sleep(time.Second)
		synctest.Wait() // the open delay ended: half-open, told on the notifier's goroutine
		fail = false
		_, err = troupe.Do(ctx, st, 0)
		require.NoError(t, err)
		synctest.Wait()
		assert.Equal(t, []string{
			"accepted", "started", "finished:failure",
			"accepted", "started", "state:closed>open", "finished:failure",
			"rejected:open",
			"state:open>half-open", "accepted", "started", "state:half-open>closed", "finished:success",
		}, rec.seq("breaker"))
		require.NoError(t, st.Close(ctx))
	})
}

// spec: OB1
func TestOB1_RestartIsReported(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		sys := troupetest.NewSystem(t)
		rec := &recorder{}
		mock, h := troupetest.NewMock[int, int]()
		st, err := stages.Stack[int, int]().Buffer(4).Observe(rec, "p").Build(sys, mock)
		require.NoError(t, err)
		h.PanicOnReady("boom")
		_, err = troupe.Do(ctx, st, 1)
		assert.ErrorIs(t, err, troupe.ErrRestarted)
		assert.ErrorIs(t, err, troupe.ErrPanic)
		synctest.Wait() // the supervisor restarts the stage
		h.Allow(1)
		c := troupetest.Go(ctx, st, 2)
		h.Next(ctx).Respond(2)
		require.NoError(t, (<-c).Err)
		synctest.Wait()
		assert.Equal(t, []string{
			"accepted", "rejected:restarted", "finished:panic", "restarted",
			"accepted", "started", "finished:success",
		}, rec.seq("buffer"))
		for _, ev := range rec.events() {
			if ev.Type == troupe.EventRestarted {
				assert.ErrorIs(t, ev.Err, troupe.ErrPanic)
			}
		}
		require.NoError(t, st.Close(ctx))
	})
}

// spec: OB1
func TestOB1_FilterRejectionAndFallback(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		sys := troupetest.NewSystem(t)
		rec := &recorder{}
		odd := func(v int) (int, error) {
			if v%2 != 0 {
				return v, errFlaky
			}
			return v, nil
		}
		st, err := stages.Stack[int, int]().Observe(rec, "p").
			Fallback(func(context.Context, int, error) (int, error) { return -1, nil }).
			Filter(odd).
			Build(sys, actors.Func(echo))
		require.NoError(t, err)
		v, err := troupe.Do(ctx, st, 3)
		require.NoError(t, err)
		assert.Equal(t, -1, v)
		v, err = troupe.Do(ctx, st, 4)
		require.NoError(t, err)
		assert.Equal(t, 4, v)
		synctest.Wait()
		assert.Equal(t, []string{
			"accepted", "rejected:filtered", "finished:failure",
			"accepted", "started", "finished:success",
		}, rec.seq("filter"))
		assert.Equal(t, []string{
			"accepted", "fallback", "finished:success",
			"accepted", "finished:success",
		}, rec.seq("fallback"))
		assertCallContexts(t, rec.events())
		require.NoError(t, st.Close(ctx))
	})
}

// spec: OB1
func TestOB1_SystemObserverUnlessTheStackHasItsOwn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		sysRec, stackRec := &recorder{}, &recorder{}
		sys := troupetest.NewSystem(t, actors.WithObserver(sysRec, "system"))
		plain, err := stages.Stack[int, int]().Limit(1).Build(sys, actors.Func(echo))
		require.NoError(t, err)
		own, err := stages.Stack[int, int]().Limit(1).Named("mine").Observe(stackRec, "stack").Build(sys, actors.Func(echo))
		require.NoError(t, err)
		_, err = troupe.Do(ctx, plain, 1)
		require.NoError(t, err)
		_, err = troupe.Do(ctx, own, 1)
		require.NoError(t, err)
		synctest.Wait()
		assert.Equal(t, []string{"accepted", "started", "finished:success"}, sysRec.seq("limit"))
		assert.Empty(t, sysRec.seq("mine"))
		assert.Equal(t, []string{"accepted", "started", "finished:success"}, stackRec.seq("mine"))
		for _, ev := range stackRec.events() {
			assert.Equal(t, "stack", ev.Pipeline)
			assert.Equal(t, "limit", ev.StageKind)
		}
		require.NoError(t, plain.Close(ctx))
		require.NoError(t, own.Close(ctx))
	})
}
