package stages_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/stages"
	"github.com/troupe-go/troupe/stages/breaker"
	"github.com/troupe-go/troupe/stages/ratelimit"
	"github.com/troupe-go/troupe/stages/timeout"
	"github.com/troupe-go/troupe/troupetest"
)

// panicky panics at every event of type on.
type panicky struct {
	on   troupe.EventType
	seen atomic.Int64
}

func (p *panicky) Observe(ev troupe.Event) {
	if ev.Type == p.on {
		p.seen.Add(1)
		panic("observer: " + ev.Type.String())
	}
}

// spec: OB1, HR1
func TestOB1_PanickingObserverIsAnOutcomeNeverACrash(t *testing.T) {
	for _, tc := range []struct {
		on    troupe.EventType
		fn    func(ctx context.Context, v int) (int, error) // the downstream
		cause error                                         // the outcome's, beside ErrPanic; nil: none
		calls int64                                         // downstream calls per request
		ctxOK bool                                          // the callers' contexts are live
	}{
		{on: troupe.EventAccepted, fn: echo, calls: 0, ctxOK: true},
		{on: troupe.EventStarted, fn: echo, calls: 0, ctxOK: true},
		{on: troupe.EventFinished, fn: echo, calls: 1, ctxOK: true},
		{on: troupe.EventRetried, fn: flaky, calls: 1, ctxOK: true}, // the session ends with the panic, as with one in CloneRequest
		{on: troupe.EventTimedOut, fn: hang, cause: timeout.ErrTimeout, calls: 1, ctxOK: true},
		{on: troupe.EventRejected, fn: echo, cause: context.Canceled, calls: 0},
	} {
		t.Run(tc.on.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var log troupetest.Log
				sys := troupetest.NewSystem(t, actors.WithLogger(log.Logger()))
				obs := &panicky{on: tc.on}
				var calls atomic.Int64
				api := actors.Func(func(ctx context.Context, v int) (int, error) {
					calls.Add(1)
					return tc.fn(ctx, v)
				})
				st, err := stages.Stack[int, int]().Limit(4).Timeout(time.Second).Retry(1, nil).
					Observe(obs, "p").Build(sys, api)
				require.NoError(t, err)
				ctx, cancel := context.WithCancel(context.Background())
				if !tc.ctxOK {
					cancel()
				}
				defer cancel()
				const n = 8
				var outs [n]<-chan troupetest.Result[int]
				for i := range outs {
					outs[i] = troupetest.Go(ctx, st, i)
				}
				for i := range outs {
					res := <-outs[i] // every caller gets its outcome
					assert.ErrorIs(t, res.Err, troupe.ErrPanic, "request %d", i)
					if tc.cause != nil {
						assert.ErrorIs(t, res.Err, tc.cause, "request %d", i)
					}
				}
				synctest.Wait()
				assert.Equal(t, n*tc.calls, calls.Load())
				assert.Positive(t, obs.seen.Load())
				s, ok := st.Stats("limit")
				require.True(t, ok)
				assert.Zero(t, s.Used, "every slot given back")
				require.NoError(t, st.Close(context.Background()), "nothing left to drain")
				assert.Contains(t, log.String(), "observer panicked")
			})
		})
	}
}

// spec: OB1, HR1
func TestOB1_PanicAtAnEventNoCallWaitsForIsLogged(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var log troupetest.Log
		sys := troupetest.NewSystem(t, actors.WithLogger(log.Logger()), actors.WithObserver(&panicky{on: troupe.EventStateChanged}, "sys"))
		st, err := stages.Stack[int, int]().RateLimit(ratelimit.Rate{Num: 1, Per: time.Second}).Build(sys, actors.Func(echo))
		require.NoError(t, err)
		for i := range 3 {
			v, err := troupe.Do(context.Background(), st, i)
			require.NoError(t, err) // limited, then ready again: the calls go on
			assert.Equal(t, i, v)
		}
		synctest.Wait()
		assert.Equal(t, 5, strings.Count(log.String(), "observer panicked"), log.String())
		require.NoError(t, st.Close(context.Background()))
	})
}

// spec: OB1, HR1
func TestOB1_PanicAtABreakerTransitionIsTheOutcomeOfTheCallThatMadeIt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sys := troupetest.NewSystem(t)
		st, err := stages.Stack[int, int]().Breaker(breaker.CountWindow(1)).
			Observe(&panicky{on: troupe.EventStateChanged}, "p").Build(sys, actors.Func(flaky))
		require.NoError(t, err)
		_, err = troupe.Do(context.Background(), st, 1)
		assert.ErrorIs(t, err, troupe.ErrPanic, "the call that opened the breaker")
		assert.ErrorIs(t, err, errFlaky)
		_, err = troupe.Do(context.Background(), st, 2)
		assert.ErrorIs(t, err, breaker.ErrOpen)
		assert.NotErrorIs(t, err, troupe.ErrPanic)
		require.NoError(t, st.Close(context.Background()))
	})
}

func echo(_ context.Context, v int) (int, error) { return v, nil }

func flaky(context.Context, int) (int, error) { return 0, errFlaky }

func hang(ctx context.Context, _ int) (int, error) {
	<-ctx.Done()
	return 0, ctx.Err()
}
