package breaker_test

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
	"github.com/troupe-go/troupe/troupetest"
)

// OnStateChange runs on a goroutine of its own: while it blocks, the
// breaker goes on serving (here refusing, at once), and only the call
// whose outcome made the change waits for it.
//
// spec: CB3
func TestCB3_OnStateChangeHoldsUpOnlyTheCallThatMadeTheChange(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		entered, release := make(chan breaker.State, 1), make(chan struct{})
		onChange := func(_, to breaker.State) {
			entered <- to
			<-release
		}
		br, f := overFake(t, breaker.CountWindow(1), breaker.OnStateChange(onChange))
		c := troupetest.Go[step, int](context.Background(), br, fail)
		assert.Equal(t, open, <-entered)
		synctest.Wait()
		select {
		case <-c:
			t.Fatal("the call that opened the breaker returned before OnStateChange did")
		default:
		}
		start := time.Now()
		openErr(t, run(br, ok))
		assert.Zero(t, time.Since(start), "another call is refused meanwhile, at once")
		assert.Equal(t, open, br.State())
		close(release)
		assert.ErrorIs(t, (<-c).Err, errDown, "then the call gets its own outcome")
		assert.Equal(t, int64(1), f.calls.Load())
	})
}

// The breaker's stats: its name, and its Snapshot as Detail, in a stack
// too.
//
// spec: CB3, API5
func TestCB3_StatsCarryTheSnapshot(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fake{}
		st, err := stages.Stack[step, int]().Breaker(breaker.CountWindow(2)).Named("payments").
			Build(troupetest.NewSystem(t), f.service())
		require.NoError(t, err)
		start := time.Now()
		require.ErrorIs(t, run(st, ok, fail), errDown)
		s, ok := st.Stats("payments")
		require.True(t, ok)
		assert.Equal(t, breaker.Snapshot{State: open, Since: start, RetryAt: start.Add(breaker.DefaultOpenDelay), Openings: 1}, s.Detail)
		assert.Equal(t, []string{"closed", "open", "half-open", "State(7)"},
			[]string{closed.String(), open.String(), halfOpen.String(), breaker.State(7).String()})
	})
}

// A panic in the classifier is the call's outcome, wrapping the call's own
// error; the call is not counted, and the stage goes on.
//
// spec: HR1, CB1
func TestHR1_APanickingClassifierIsTheCallsOutcome(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		br, _ := overFake(t, breaker.CountWindow(1), breaker.Classify(func(res int, _ error) bool {
			if res == 13 {
				panic("unlucky")
			}
			return false
		}))
		err := run(br, step{res: 13, err: errDown})
		assert.ErrorIs(t, err, troupe.ErrPanic)
		assert.ErrorIs(t, err, errDown, "and the call's own error")
		var pe *troupe.PanicError
		require.ErrorAs(t, err, &pe)
		assert.Equal(t, "breaker: classifier", pe.Where)
		_, err = troupe.Do(context.Background(), br, step{res: 13})
		require.ErrorAs(t, err, &pe, "a success is a panic too")
		assert.Equal(t, [2]int{0, 0}, [2]int{br.Snapshot().Calls, br.Snapshot().InFlight}, "not counted")
		out, err := troupe.Do(context.Background(), br, step{res: 1})
		require.NoError(t, err)
		assert.Equal(t, 1, out)
	})
}

// A panic in OnStateChange is the outcome of the call whose outcome made
// the change; a change no call made (the open delay ending) logs it. The
// breaker goes on either way.
//
// spec: HR1, CB3
func TestHR1_APanickingOnStateChangeIsAnOutcome(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logs troupetest.Log
		f := &fake{}
		onChange := func(from, to breaker.State) {
			if to != closed {
				panic("callback bug: " + to.String())
			}
		}
		br, err := breaker.New[step, int](troupetest.NewSystem(t, actors.WithLogger(logs.Logger())), f.service(),
			breaker.CountWindow(1), breaker.HalfOpenTrials(1), breaker.OpenDelay(time.Second), breaker.OnStateChange(onChange))
		require.NoError(t, err)
		err = run(br, fail)
		assert.ErrorIs(t, err, troupe.ErrPanic)
		assert.ErrorIs(t, err, errDown)
		var pe *troupe.PanicError
		require.ErrorAs(t, err, &pe)
		assert.Equal(t, "breaker: OnStateChange", pe.Where)
		assert.Equal(t, "callback bug: open", pe.Value)
		assert.Equal(t, open, br.State())
		openErr(t, run(br, ok))

		time.Sleep(time.Second)
		synctest.Wait()
		assert.Contains(t, logs.String(), "breaker: OnStateChange panicked")
		assert.Contains(t, logs.String(), "callback bug: half-open")
		assert.Equal(t, halfOpen, br.State())
		require.NoError(t, run(br, ok))
		assert.Equal(t, closed, br.State())
	})
}
