package bench

import (
	"context"
	"testing"
	"time"

	"github.com/failsafe-go/failsafe-go"
	"github.com/failsafe-go/failsafe-go/adaptivelimiter"
	"github.com/failsafe-go/failsafe-go/circuitbreaker"
	fsfallback "github.com/failsafe-go/failsafe-go/fallback"
	"github.com/failsafe-go/failsafe-go/hedgepolicy"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/stages"
	"github.com/troupe-go/troupe/stages/adaptive"
	"github.com/troupe-go/troupe/stages/breaker"
	"github.com/troupe-go/troupe/stages/hedge"
)

// policyCase is one of the policies beyond tower's, built by troupe and by
// failsafe-go with the same settings, over a no-op downstream that always
// succeeds: the cost of the policy on the path every call takes (a closed
// breaker, a hedge that never fires, a fallback never used).
type policyCase struct {
	name     string
	failsafe func() []failsafe.Policy[int]
	troupe   func(stages.Builder[int, int]) stages.Builder[int, int]
}

// Settings shared by both sides: a count-based breaker over the last 100
// calls opening at 50 % failures, a hedge after 1 s (never reached), a
// fallback value, an adaptive limit between 1 and 200 starting at 20
// (callers wait for a permit on both sides).
var policyCases = []policyCase{
	{"breaker",
		func() []failsafe.Policy[int] {
			return []failsafe.Policy[int]{circuitbreaker.NewBuilder[int]().WithFailureThresholdRatio(50, 100).WithDelay(time.Second).Build()}
		},
		func(b stages.Builder[int, int]) stages.Builder[int, int] {
			return b.Breaker(breaker.CountWindow(100), breaker.MinCalls(100), breaker.FailureRate(0.5), breaker.OpenDelay(time.Second))
		}},
	{"hedge",
		func() []failsafe.Policy[int] {
			return []failsafe.Policy[int]{hedgepolicy.NewWithDelay[int](time.Second)}
		},
		func(b stages.Builder[int, int]) stages.Builder[int, int] {
			return b.Hedge(hedge.Delay(time.Second))
		}},
	{"fallback",
		func() []failsafe.Policy[int] {
			return []failsafe.Policy[int]{fsfallback.NewWithResult(0)}
		},
		func(b stages.Builder[int, int]) stages.Builder[int, int] {
			return b.Fallback(func(context.Context, int, error) (int, error) { return 0, nil })
		}},
	{"adaptive",
		func() []failsafe.Policy[int] {
			return []failsafe.Policy[int]{adaptivelimiter.NewBuilder[int]().WithLimits(1, 200, 20).WithMaxWaitTime(time.Minute).Build()}
		},
		func(b stages.Builder[int, int]) stages.Builder[int, int] {
			return b.Adaptive(adaptive.Limits(1, 200), adaptive.Initial(20))
		}},
	{"breaker+hedge",
		func() []failsafe.Policy[int] {
			return []failsafe.Policy[int]{
				circuitbreaker.NewBuilder[int]().WithFailureThresholdRatio(50, 100).WithDelay(time.Second).Build(),
				hedgepolicy.NewWithDelay[int](time.Second),
			}
		},
		func(b stages.Builder[int, int]) stages.Builder[int, int] {
			return b.Breaker(breaker.CountWindow(100), breaker.MinCalls(100), breaker.FailureRate(0.5), breaker.OpenDelay(time.Second)).
				Hedge(hedge.Delay(time.Second))
		}},
}

// BenchmarkPolicies is each policy beyond tower's (and breaker + hedge in a
// stack), troupe's stage beside failsafe-go's policy doing the same work,
// by one caller (seq) and by 64 (par64), in the same run.
func BenchmarkPolicies(b *testing.B) {
	for _, mode := range []struct {
		name    string
		callers int
	}{{"seq", 1}, {"par64", 64}} {
		b.Run(mode.name, func(b *testing.B) {
			for _, pc := range policyCases {
				b.Run(pc.name+"/failsafe", func(b *testing.B) {
					ex := failsafe.With(pc.failsafe()...)
					runCallers(b, mode.callers, shared(func(ctx context.Context, v int) (int, error) {
						return ex.WithContext(ctx).GetWithExecution(func(exec failsafe.Execution[int]) (int, error) {
							return noop(exec.Context(), v)
						})
					}))
				})
				b.Run(pc.name+"/troupe", func(b *testing.B) {
					sys := actors.NewSystem()
					defer func() { _ = sys.Shutdown(context.Background()) }()
					st, err := pc.troupe(stages.Stack[int, int]()).Build(sys, actors.Func(noop))
					if err != nil {
						b.Fatal(err)
					}
					defer func() { _ = st.Close(context.Background()) }()
					runCallers(b, mode.callers, shared(func(ctx context.Context, v int) (int, error) {
						return troupe.Do(ctx, st, v)
					}))
				})
			}
		})
	}
}
