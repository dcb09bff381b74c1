package stages_test

import (
	"context"
	"errors"
	"math"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/backoff"
	"github.com/troupe-go/troupe/stages"
	"github.com/troupe-go/troupe/stages/breaker"
	"github.com/troupe-go/troupe/stages/hedge"
	"github.com/troupe-go/troupe/stages/ratelimit"
	"github.com/troupe-go/troupe/stages/retry"
	"github.com/troupe-go/troupe/troupetest"
)

const forever = time.Duration(math.MaxInt64)

type constDelay time.Duration

func (d constDelay) Delay(int) time.Duration { return time.Duration(d) }

// spec: EG5
func TestATimeoutOfMaxInt64IsADeadlineThatFarOffWheneverTheCallIsMade(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var deadlines []time.Time
		api := actors.Func(func(ctx context.Context, d time.Duration) (time.Duration, error) {
			dl, ok := ctx.Deadline()
			if ok {
				deadlines = append(deadlines, dl)
			}
			time.Sleep(d)
			return d, ctx.Err()
		})
		st, err := stages.Stack[time.Duration, time.Duration]().Timeout(forever).Build(troupetest.NewSystem(t), api)
		require.NoError(t, err)
		for _, at := range []time.Duration{0, time.Nanosecond, time.Second, 7 * time.Hour} {
			time.Sleep(at) // the stage's clock has run this long when the call is made
			start := time.Now()
			out, err := troupe.Do(context.Background(), st, time.Hour)
			require.NoError(t, err, "called %v after the stage was made", at)
			assert.Equal(t, time.Hour, out)
			require.NotEmpty(t, deadlines)
			assert.True(t, deadlines[len(deadlines)-1].After(start.Add(200*365*24*time.Hour)), "the call's deadline is centuries away")
		}
	})
}

// spec: EG5
func TestDelaysUpToMaxInt64NeverComeDueAtOnce(t *testing.T) {
	s := stages.Stack[string, string]
	cases := map[string]struct {
		b    stages.Builder[string, string]
		reqs []string // sent at once; only the first call of all reaches the downstream
		slow bool     // the downstream answers after an hour
	}{
		"breaker open delay": {b: s().Breaker(breaker.MinCalls(1), breaker.CountWindow(1), breaker.OpenDelay(forever), breaker.GrowOpenDelay(2, forever)), reqs: []string{"a"}},
		"rate limit":         {b: s().RateLimit(ratelimit.Rate{Num: 1, Per: forever}), reqs: []string{"a", "b"}},
		"smooth rate":        {b: s().RateLimit(ratelimit.Rate{Num: 1, Per: forever}, ratelimit.Smooth(1)), reqs: []string{"a", "b"}},
		"hedge delay":        {b: s().Hedge(hedge.Delay(forever), hedge.NoBudget()), reqs: []string{"a"}, slow: true},
		"retry wait":         {b: s().Retry(3, constDelay(forever)), reqs: []string{"a"}},
		"timeout and retry":  {b: s().Timeout(forever).Retry(1, constDelay(forever)), reqs: []string{"a"}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var calls atomic.Int32
				api := actors.Func(func(context.Context, string) (string, error) {
					calls.Add(1)
					if c.slow {
						time.Sleep(time.Hour)
					}
					return "", errors.New("down")
				})
				st, err := c.b.Build(troupetest.NewSystem(t), api)
				require.NoError(t, err)
				time.Sleep(time.Second) // the stages' clocks have run when the calls come
				if name == "breaker open delay" {
					_, _ = troupe.Do(context.Background(), st, "trips it") // opens for forever
				}
				ctx, cancel := context.WithTimeout(context.Background(), 24*time.Hour)
				defer cancel()
				for _, req := range c.reqs {
					go func() { _, _ = troupe.Do(ctx, st, req) }()
				}
				time.Sleep(12 * time.Hour)
				assert.EqualValues(t, 1, calls.Load(), "half a day on, only the first call has reached the downstream: no second call, retry or hedge")
				cancel()
				// A request queued behind the rate limit waits for its turn
				// as the stage drains: give up on it after a minute.
				cctx, ccancel := context.WithTimeout(context.Background(), time.Minute)
				defer ccancel()
				_ = st.Close(cctx)
			})
		})
	}
}

// spec: EG5
func TestBackoffsUpToMaxInt64GrowAndStayInRange(t *testing.T) {
	for _, j := range []backoff.Jitter{backoff.None, backoff.Full, backoff.Ratio(0.5)} {
		bo, err := backoff.New(time.Nanosecond, forever, backoff.WithMultiplier(1e9), backoff.WithJitter(j))
		require.NoError(t, err)
		for n := range 200 {
			d := bo.Delay(n)
			assert.GreaterOrEqual(t, d, time.Duration(0))
			assert.LessOrEqual(t, bo.Base(n), bo.Base(n+1), "the base never wraps around")
		}
		assert.Equal(t, forever, bo.Base(100))
	}
}

var _ retry.Delayer = constDelay(0)
