package stages_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/stages"
	"github.com/troupe-go/troupe/stages/adaptive"
	"github.com/troupe-go/troupe/stages/hedge"
	"github.com/troupe-go/troupe/troupetest"
)

// spec: OB1, H1 — a hedge sent is reported with its number.
func TestOB1_AHedgeIsReported(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{}
		mock, h := troupetest.NewMock[int, int]()
		st, err := stages.Stack[int, int]().Observe(rec, "p").
			Hedge(hedge.Delay(100*time.Millisecond), hedge.NoBudget()).
			Build(troupetest.NewSystem(t), mock)
		require.NoError(t, err)
		ctx := context.Background()
		h.Allow(2)
		fut := troupetest.Go(ctx, st, 7)
		original := h.Next(ctx)
		time.Sleep(100 * time.Millisecond) // the fake clock reaches the delay
		copy := h.Next(ctx)
		copy.Respond(70)
		assert.Equal(t, 70, (<-fut).Value)
		synctest.Wait()
		assert.ErrorIs(t, original.Ctx.Err(), context.Canceled, "the loser")
		assert.Equal(t, []string{"accepted", "started", "hedged:1", "started", "finished:success"}, rec.seq("hedge"), "each attempt starts the downstream call")
		assertCallContexts(t, rec.events())
	})
}

// spec: OB1, AL1 — the starting limit and every move of the adaptive limit
// are reported with the new limit, in order, ending at the limit the stage
// has.
func TestOB1_AdaptiveLimitChangesAreReported(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{}
		fail := errors.New("overloaded")
		calls := 0
		fn := actors.Func(func(context.Context, int) (int, error) {
			calls++
			if calls > 20 {
				return 0, fail // drops cut the limit
			}
			return 0, nil
		})
		st, err := stages.Stack[int, int]().Observe(rec, "p").
			Adaptive(adaptive.Limits(1, 40), adaptive.Initial(10), adaptive.Samples(2)).
			Build(troupetest.NewSystem(t), fn)
		require.NoError(t, err)
		for i := range 30 {
			_, _ = troupe.Do(context.Background(), st, i)
		}
		var limits []int
		for _, ev := range rec.events() {
			if ev.Type == troupe.EventLimitChanged {
				assert.Equal(t, "adaptive", ev.Stage)
				limits = append(limits, ev.Limit)
			}
		}
		s, ok := st.Stats("adaptive")
		require.True(t, ok)
		snap := s.Detail.(adaptive.Snapshot)
		require.NotEmpty(t, limits)
		assert.Equal(t, snap.Limit, limits[len(limits)-1], "the last report is the limit now: %v", limits)
		assert.Equal(t, 1, limits[0], "the starting limit (the probe's, the min), before the first request")
		assert.Contains(t, limits, 10, "the move to the initial limit after the probe")
		assert.Less(t, snap.Limit, 10, "the drops cut it")
	})
}
