package stages_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/stages"
	"github.com/troupe-go/troupe/stages/adaptive"
	"github.com/troupe-go/troupe/stages/fallback"
	"github.com/troupe-go/troupe/stages/hedge"
	"github.com/troupe-go/troupe/stages/timeout"
	"github.com/troupe-go/troupe/troupetest"
)

type callerKey struct{}

// callerCtx is a caller's context that a fallback can recognise.
func callerCtx() context.Context {
	return context.WithValue(context.Background(), callerKey{}, "caller")
}

// waitCtx is a downstream that works until its context ends.
var waitCtx = actors.Func(func(ctx context.Context, _ int) (int, error) {
	<-ctx.Done()
	return 0, ctx.Err()
})

// A Fallback outside a stage that makes its own context for the work (a
// Hedge, a Timeout inside a Retry) falls back: the context it judges and
// runs the fallback with is the caller's, not the one that ended with the
// inner stage's attempt; fallback.To reaches the alternative.
//
// spec: EG1
func TestAFallbackOutsideAStageWithItsOwnContextFallsBackWithTheCallers(t *testing.T) {
	for _, tc := range []struct {
		name  string
		inner func(stages.Builder[int, int]) stages.Builder[int, int]
	}{
		{"hedge", func(b stages.Builder[int, int]) stages.Builder[int, int] {
			return b.Hedge(hedge.Delay(100*time.Millisecond), hedge.NoBudget()).Timeout(time.Second)
		}},
		{"retry over timeout", func(b stages.Builder[int, int]) stages.Builder[int, int] {
			return b.Retry(2, nil).Timeout(time.Second)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				sys := troupetest.NewSystem(t)
				alt, err := stages.Stack[int, int]().Limit(1).Build(sys, actors.Func(func(ctx context.Context, v int) (int, error) {
					if ctx.Value(callerKey{}) == nil || ctx.Err() != nil {
						return 0, errors.New("not the caller's context")
					}
					return v * 10, nil
				}))
				require.NoError(t, err)
				for _, fn := range []fallback.Func[int, int]{fallback.To[int, int](alt), nil} {
					var seen context.Context
					if fn == nil {
						fn = func(ctx context.Context, v int, _ error) (int, error) {
							seen = ctx
							return -v, nil
						}
					}
					st, err := tc.inner(stages.Stack[int, int]().Fallback(fn)).Build(sys, waitCtx)
					require.NoError(t, err)
					v, err := troupe.Do(callerCtx(), st, 4)
					require.NoError(t, err)
					if seen != nil {
						assert.Equal(t, -4, v)
						assert.Equal(t, "caller", seen.Value(callerKey{}))
						assert.NoError(t, seen.Err(), "the fallback runs with the caller's live context")
					} else {
						assert.Equal(t, 40, v, "fallback.To reaches the alternative")
					}
					require.NoError(t, st.Close(context.Background()))
				}
				require.NoError(t, alt.Close(context.Background()))
			})
		})
	}
}

// A Retry over a Timeout gives each attempt its whole time, also when the
// work ignores its context and returns late on the caller's goroutine:
// the next attempt is sent when the caller is free to run it. Work that
// takes 1.5 s twice, then answers at once, under Retry(3) over a 1 s
// Timeout: three executions and a success, as failsafe-go's RetryPolicy
// over its Timeout (each attempt's deadline 1 s after it started).
//
// spec: EG2
func TestARetryOverATimeoutGivesEachAttemptItsWholeTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sys := troupetest.NewSystem(t)
		var mu sync.Mutex
		var starts, deadlines []time.Duration
		t0 := time.Now()
		st, err := stages.Stack[int, int]().Retry(3, nil).Timeout(time.Second).Build(sys, actors.Func(func(ctx context.Context, v int) (int, error) {
			mu.Lock()
			n := len(starts)
			dl, _ := ctx.Deadline()
			starts, deadlines = append(starts, time.Since(t0)), append(deadlines, dl.Sub(t0))
			mu.Unlock()
			if n < 2 {
				time.Sleep(1500 * time.Millisecond) // ignores its context
				return 0, errors.New("late")
			}
			return v, nil
		}))
		require.NoError(t, err)
		v, err := troupe.Do(context.Background(), st, 7)
		require.NoError(t, err)
		assert.Equal(t, 7, v)
		mu.Lock()
		defer mu.Unlock()
		require.Len(t, starts, 3, "three executions")
		for i := range starts {
			assert.Equal(t, starts[i]+time.Second, deadlines[i], "attempt %d's deadline is 1 s after it started", i+1)
		}
		require.NoError(t, st.Close(context.Background()))
	})
}

// finishes counts the EventFinished outcomes of one stage.
type finishes struct {
	stage string
	mu    sync.Mutex
	got   []troupe.Outcome
}

func (f *finishes) Observe(ev troupe.Event) {
	if ev.Type == troupe.EventFinished && ev.Stage == f.stage {
		f.mu.Lock()
		f.got = append(f.got, ev.Outcome)
		f.mu.Unlock()
	}
}

// A caller whose context ends before its outcome gets its context's error,
// whatever the work that finishes later returns: a success of work that
// ignored its context, a hedge's result, a fallback's value, or the work's
// own error. The work ran on the caller's goroutine, so the caller hears
// when it returns; the outermost stage observes the late outcome as
// canceled.
//
// spec: EG3
func TestACallerWhoseContextEndedGetsItsErrorWhateverComesLater(t *testing.T) {
	late := func(res int, err error) *actors.FuncService[int, int] {
		return actors.Func(func(context.Context, int) (int, error) {
			time.Sleep(2 * time.Second) // ignores its context
			return res, err
		})
	}
	for _, tc := range []struct {
		name  string
		stack stages.Builder[int, int]
		leaf  *actors.FuncService[int, int]
		first string
	}{
		{"success", stages.Stack[int, int]().Limit(2), late(1, nil), "limit"},
		{"own error", stages.Stack[int, int]().Limit(2), late(0, errors.New("boom")), "limit"},
		{"hedge", stages.Stack[int, int]().Hedge(hedge.Delay(100*time.Millisecond), hedge.NoBudget()), late(1, nil), "hedge"},
		{"fallback", stages.Stack[int, int]().Fallback(func(context.Context, int, error) (int, error) { return 9, nil },
			fallback.When(func(error) bool { return true })), late(0, errors.New("boom")), "fallback"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				sys := troupetest.NewSystem(t)
				obs := &finishes{stage: tc.first}
				st, err := tc.stack.Observe(obs, "p").Build(sys, tc.leaf)
				require.NoError(t, err)
				ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
				defer cancel()
				start := time.Now()
				v, err := troupe.Do(ctx, st, 1)
				assert.ErrorIs(t, err, context.DeadlineExceeded)
				assert.Zero(t, v)
				assert.Equal(t, 2*time.Second, time.Since(start), "the caller ran the work: it hears when the work returns")
				time.Sleep(time.Second) // a hedge's own attempt, on a goroutine of its own, returns too
				synctest.Wait()
				require.NoError(t, st.Close(context.Background()))
				obs.mu.Lock()
				defer obs.mu.Unlock()
				assert.Equal(t, []troupe.Outcome{troupe.OutcomeCanceled}, obs.got)
			})
		})
	}
}

// The work's context is not cancelled by its call's normal outcome, at any
// depth: a Timeout, a Retry and a Hedge over work that keeps its context
// after returning (a body it streams on a goroutine of its own) leave it
// live until the caller's context ends.
//
// spec: EG13
func TestTheWorksContextOutlivesANormalOutcomeThroughEveryStage(t *testing.T) {
	for name, b := range map[string]stages.Builder[int, int]{
		"limit":   stages.Stack[int, int]().Limit(2),
		"timeout": stages.Stack[int, int]().Timeout(time.Second),
		"retry":   stages.Stack[int, int]().Retry(2, nil).Timeout(time.Second),
		"hedge":   stages.Stack[int, int]().Hedge(hedge.Delay(time.Hour)),
		"buffer":  stages.Stack[int, int]().Buffer(2).Limit(2),
		"abandon": stages.Stack[int, int]().Timeout(time.Second, timeout.Abandon()),
	} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				sys := troupetest.NewSystem(t)
				var kept atomic.Value
				st, err := b.Build(sys, actors.Func(func(ctx context.Context, v int) (int, error) {
					kept.Store(ctx)
					ctx.Done() // as an HTTP client does
					return v, nil
				}))
				require.NoError(t, err)
				caller, cancel := context.WithCancel(context.Background())
				_, err = troupe.Do(caller, st, 1)
				require.NoError(t, err)
				ctx := kept.Load().(context.Context)
				time.Sleep(time.Hour)
				assert.NoError(t, ctx.Err(), "live after the call, past every stage's deadline")
				cancel()
				synctest.Wait()
				<-ctx.Done()
				assert.ErrorIs(t, ctx.Err(), context.Canceled)
				require.NoError(t, st.Close(context.Background()))
			})
		})
	}
}

// A Fallback outside a Timeout in Abandon mode runs its function when the
// call fails: the function is the caller's work, not the work the Timeout
// detached below it (it used to be dropped as abandoned work, and the
// caller got the fallback's failure wrapping ErrCallerGone).
//
// spec: EG1, FB1
func TestAFallbackOutsideAnAbandoningTimeoutRunsItsFunction(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sys := troupetest.NewSystem(t)
		st, err := stages.Stack[int, int]().
			Fallback(func(_ context.Context, v int, _ error) (int, error) { return -v, nil }).
			Timeout(time.Second, timeout.Abandon()).
			Build(sys, actors.Func(func(context.Context, int) (int, error) { return 0, errors.New("down") }))
		require.NoError(t, err)
		v, err := troupe.Do(context.Background(), st, 5)
		require.NoError(t, err)
		assert.Equal(t, -5, v)
		require.NoError(t, st.Close(context.Background()))
	})
}

// A Limit (and an Adaptive limit) outside a Hedge counts the original
// attempt until its work returns, also after a hedge won: with a limit of
// 1, the next caller's call starts when the lost original (which ignores
// its context) returns, not when the hedge won.
//
// spec: H1, C1, AL1, EG13
func TestALimitOutsideAHedgeCountsTheLostOriginalUntilItReturns(t *testing.T) {
	for name, b := range map[string]stages.Builder[int, int]{
		"limit":    stages.Stack[int, int]().Limit(1),
		"adaptive": stages.Stack[int, int]().Adaptive(adaptive.Limits(1, 1), adaptive.Initial(1)),
	} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				sys := troupetest.NewSystem(t)
				var calls atomic.Int32
				var second time.Duration
				t0 := time.Now()
				st, err := b.Hedge(hedge.Delay(100*time.Millisecond), hedge.NoBudget()).
					Build(sys, actors.Func(func(_ context.Context, v int) (int, error) {
						switch calls.Add(1) {
						case 1:
							time.Sleep(time.Second) // the original, ignoring its context
						case 3:
							second = time.Since(t0)
						}
						return v, nil
					}))
				require.NoError(t, err)
				done := make(chan struct{})
				go func() {
					defer close(done)
					time.Sleep(150 * time.Millisecond) // after the hedge went out
					_, err := troupe.Do(context.Background(), st, 2)
					assert.NoError(t, err)
				}()
				_, err = troupe.Do(context.Background(), st, 1) // the caller hears when its original returns
				require.NoError(t, err)
				<-done
				assert.Equal(t, time.Second, second, "the second caller's call starts when the lost original returns")
				require.NoError(t, st.Close(context.Background()))
			})
		})
	}
}
