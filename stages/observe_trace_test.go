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
	"github.com/troupe-go/troupe/troupetest"
)

type ctxKey string

// tracer is an AttemptTracer that numbers attempts in the context it hands
// to the downstream call, and keeps what it was told.
type tracer struct {
	recorder
	mu      sync.Mutex
	started []troupe.Event
	ended   []error
	n       int
	panicOn string // "start" or "end": panic there
}

func (tr *tracer) StartAttempt(ctx context.Context, ev troupe.Event) context.Context {
	if tr.panicOn == "start" {
		panic("tracer: start")
	}
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.started = append(tr.started, ev)
	tr.n++
	return context.WithValue(ctx, ctxKey("attempt"), tr.n)
}

func (tr *tracer) EndAttempt(ctx context.Context, err error) {
	if tr.panicOn == "end" {
		panic("tracer: end")
	}
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.ended = append(tr.ended, err)
	if ctx.Value(ctxKey("attempt")) != tr.n {
		tr.ended = append(tr.ended, errors.New("EndAttempt got another context than StartAttempt returned"))
	}
}

// spec: OB1
func TestOB1_AnAttemptTracerWrapsEachDownstreamCallInTheCallersContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sys := troupetest.NewSystem(t)
		tr := &tracer{}
		var seen []any
		api := actors.Func(func(ctx context.Context, v int) (int, error) {
			seen = append(seen, ctx.Value(ctxKey("attempt")))
			if len(seen) < 3 {
				return 0, errFlaky
			}
			return v, nil
		})
		st, err := stages.Stack[int, int]().Observe(tr, "api").Timeout(time.Second).Retry(2, nil).Build(sys, api)
		require.NoError(t, err)
		ctx := context.WithValue(t.Context(), ctxKey("caller"), "me")
		res, err := st.ReserveAndCall(ctx, 7)
		require.NoError(t, err)
		assert.Equal(t, 7, res)
		assert.Equal(t, []any{1, 2, 3}, seen, "each attempt runs with the context StartAttempt returned")
		assert.Equal(t, []error{errFlaky, errFlaky, nil}, tr.ended)
		require.Len(t, tr.started, 3)
		for _, ev := range tr.started {
			assert.Equal(t, troupe.EventStarted, ev.Type)
			assert.Equal(t, "retry", ev.Stage, "the innermost observed stage")
			assert.Equal(t, "api", ev.Pipeline)
			assert.Equal(t, "me", ev.Context.Value(ctxKey("caller")), "the attempt's context derives from the caller's")
		}
		// Observe hears the rest, each call event with the caller's context,
		// and never EventStarted (StartAttempt took its place).
		evs := tr.events()
		require.NotEmpty(t, evs)
		for _, ev := range evs {
			assert.NotEqual(t, troupe.EventStarted, ev.Type)
			assert.Equal(t, "me", ev.Context.Value(ctxKey("caller")), "%s at %s", ev.Type, ev.Stage)
		}
		assert.Equal(t, []string{"accepted", "retried:1", "retried:2", "finished:success"}, tr.seq("retry"))
		require.NoError(t, st.Close(t.Context()))
	})
}

// spec: OB1, HR1
func TestOB1_APanickingAttemptTracerIsTheAttemptsOutcome(t *testing.T) {
	for _, tc := range []struct {
		on    string
		fail  bool  // the downstream fails
		calls int64 // downstream calls
	}{
		{on: "start", calls: 0},
		{on: "end", calls: 1},
		{on: "end", fail: true, calls: 1},
	} {
		t.Run(tc.on, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var log troupetest.Log
				sys := troupetest.NewSystem(t, actors.WithLogger(log.Logger()))
				var calls atomic.Int64
				api := actors.Func(func(ctx context.Context, v int) (int, error) {
					calls.Add(1)
					if tc.fail {
						return 0, errFlaky
					}
					return v, nil
				})
				st, err := stages.Stack[int, int]().Observe(&tracer{panicOn: tc.on}, "api").Limit(1).Build(sys, api)
				require.NoError(t, err)
				_, err = st.ReserveAndCall(t.Context(), 1)
				require.ErrorIs(t, err, troupe.ErrPanic)
				assert.Equal(t, tc.fail, errors.Is(err, errFlaky), "the attempt's own outcome is kept beside the panic")
				assert.Equal(t, tc.calls, calls.Load())
				assert.Contains(t, log.String(), "observer panicked")
				// The stage is whole: the next call is served (and panics the same way).
				_, err = st.ReserveAndCall(t.Context(), 2)
				require.ErrorIs(t, err, troupe.ErrPanic)
				assert.Equal(t, 2*tc.calls, calls.Load())
				require.NoError(t, st.Close(t.Context()))
			})
		})
	}
}
