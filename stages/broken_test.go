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
	"github.com/troupe-go/troupe/stages"
	"github.com/troupe-go/troupe/stages/adaptive"
	"github.com/troupe-go/troupe/stages/breaker"
	"github.com/troupe-go/troupe/stages/fallback"
	"github.com/troupe-go/troupe/stages/hedge"
	"github.com/troupe-go/troupe/stages/ratelimit"
	"github.com/troupe-go/troupe/troupetest"
)

// everyStage is one stack per built-in stage that hands requests on to its
// inner service, each stage alone.
func everyStage() map[string]stages.Builder[string, string] {
	s := stages.Stack[string, string]
	return map[string]stages.Builder[string, string]{
		"buffer":      s().Buffer(4),
		"limit":       s().Limit(4),
		"timeout":     s().Timeout(time.Hour),
		"retry":       s().Retry(2, nil),
		"ratelimit":   s().RateLimit(ratelimit.Rate{Num: 100, Per: time.Second}),
		"loadshed":    s().LoadShed(),
		"spawnready":  s().SpawnReady(),
		"filter":      s().Filter(func(r string) (string, error) { return r, nil }),
		"asyncfilter": s().AsyncFilter(func(_ context.Context, r string) (string, error) { return r, nil }),
		"adaptive":    s().Adaptive(adaptive.Limits(4, 4)),
		"breaker":     s().Breaker(breaker.MinCalls(100)),
		"hedge":       s().Hedge(hedge.Delay(time.Hour)),
		"fallback": s().Fallback(func(_ context.Context, _ string, err error) (string, error) { return "", err },
			fallback.When(func(error) bool { return false })),
	}
}

// spec: EG4
func TestABrokenInnerServiceFailsOnlyWhatTheStageStillHolds(t *testing.T) {
	for name, b := range everyStage() {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				mock, h := troupetest.NewMock[string, string]()
				st, err := b.Build(troupetest.NewSystem(t), mock)
				require.NoError(t, err)
				ctx := context.Background()
				h.Allow(2)
				a := troupetest.Go(ctx, st, "a")
				reqA := h.Next(ctx)
				c := troupetest.Go(ctx, st, "c")
				reqC := h.Next(ctx)
				synctest.Wait()
				held := troupetest.Go(ctx, st, "held") // no unit left below: the stage holds it
				synctest.Wait()

				cause := errors.New("certificate expired")
				h.Break(cause)
				synctest.Wait()
				require.NoError(t, reqA.Ctx.Err(), "the work handed on is not told to stop")
				reqA.Respond("A")
				reqC.Fail(errors.New("c's own failure"))
				assert.Equal(t, troupetest.Result[string]{Value: "A"}, <-a, "a call handed on before the break finishes with its own outcome")
				if name != "retry" { // a retry would retry c: the broken service is its answer
					assert.EqualError(t, (<-c).Err, "c's own failure")
				} else {
					assert.ErrorIs(t, (<-c).Err, cause)
				}
				r := <-held
				assert.ErrorIs(t, r.Err, cause, "the request the stage held gets the readiness error")
				_, err = troupe.Do(ctx, st, "later")
				assert.ErrorIs(t, err, troupe.ErrClosed, "a later call")
				require.NoError(t, st.Close(ctx))
			})
		})
	}
}
