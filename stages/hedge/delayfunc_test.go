package hedge_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/stages/hedge"
	"github.com/troupe-go/troupe/troupetest"
)

// A hedge delay may be a function of the hedge's number (failsafe-go's
// DelayFunc, of the attempt): with 50 ms doubling, the hedges go 50 ms
// after the original, then 100 ms after the first hedge, then 200 ms after
// the second. The function is asked once per number when the stage is
// made; a panic, a negative delay or a nil function there is New's error.
//
// spec: PP3
func TestAHedgeDelayMayBeAFunctionOfTheHedgesNumber(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var asked []int
		doubling := func(n int) time.Duration {
			asked = append(asked, n)
			return 50 * ms << (n - 1)
		}
		x, h := overMock(t, hedge.DelayFunc(doubling), hedge.MaxHedges(3), hedge.NoBudget())
		assert.Equal(t, []int{1, 2, 3}, asked, "asked once per hedge number, at New")
		h.Allow(4)
		start := time.Now()
		got := troupetest.Go(bg, x, 7)
		var sent []time.Duration
		var reqs []*troupetest.Request[int, int]
		for range 4 {
			reqs = append(reqs, h.Next(bg)) // the bubble's clock moves to each send
			sent = append(sent, time.Since(start))
		}
		assert.Equal(t, []time.Duration{0, 50 * ms, 150 * ms, 350 * ms}, sent)
		none(t, h, "3 hedges at most")
		reqs[3].Respond(70)
		assert.Equal(t, troupetest.Result[int]{Value: 70}, <-got)
		assert.Equal(t, []int{1, 2, 3}, asked, "never asked on a request's path")

		sys := troupetest.NewSystem(t)
		okService := actors.Func(func(_ context.Context, v int) (int, error) { return v, nil })
		for name, o := range map[string]hedge.Option[int, int]{
			"panics":   hedge.DelayFunc(func(int) time.Duration { panic("a bug in DelayFunc") }),
			"negative": hedge.DelayFunc(func(int) time.Duration { return -time.Second }),
			"nil":      hedge.DelayFunc(nil),
		} {
			_, err := hedge.New[int, int](sys, okService, o)
			assert.NotNil(t, troupetest.BadOption(t, err, "hedge", "DelayFunc"), name)
		}
		_, err := hedge.New[int, int](sys, okService, hedge.DelayFunc(doubling), hedge.Delay(ms))
		troupetest.BadOption(t, err, "hedge", "DelayFunc")
	})
}
