package hedge_test

import (
	"context"
	"math"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/stages"
	"github.com/troupe-go/troupe/stages/hedge"
	"github.com/troupe-go/troupe/troupetest"
)

// spec: HR4
func TestHR4_BadOptionsAreErrorsAtConstruction(t *testing.T) {
	d := hedge.Delay(ms)
	var nilFinal func(int, error) bool
	for _, c := range []struct {
		name string
		want string // the option refused
		opts []hedge.Option[int, int]
	}{
		{"no delay", "Delay", nil},
		{"negative delay", "Delay", []hedge.Option[int, int]{hedge.Delay(-1)}},
		{"percentile 0", "Percentile", []hedge.Option[int, int]{hedge.Percentile(0, 5)}},
		{"percentile above 100", "Percentile", []hedge.Option[int, int]{hedge.Percentile(100.5, 5)}},
		{"percentile NaN", "Percentile", []hedge.Option[int, int]{hedge.Percentile(math.NaN(), 5)}},
		{"no samples", "Percentile", []hedge.Option[int, int]{hedge.Percentile(95, 0)}},
		{"window span", "Window", []hedge.Option[int, int]{d, hedge.Window(0, 10)}},
		{"window size", "Window", []hedge.Option[int, int]{d, hedge.Window(time.Second, hedge.MaxSamples+1)}},
		{"window below the minimum", "Window", []hedge.Option[int, int]{hedge.Percentile(95, 20), hedge.Window(time.Second, 19)}},
		{"no hedge", "MaxHedges", []hedge.Option[int, int]{d, hedge.MaxHedges(0)}},
		{"too many hedges", "MaxHedges", []hedge.Option[int, int]{d, hedge.MaxHedges(hedge.MaxHedgesLimit + 1)}},
		{"ratio 0", "MaxRatio", []hedge.Option[int, int]{d, hedge.MaxRatio(0)}},
		{"ratio too big", "MaxRatio", []hedge.Option[int, int]{d, hedge.MaxRatio(1001)}},
		{"ratio too small", "MaxRatio", []hedge.Option[int, int]{d, hedge.MaxRatio(1e-9)}},
		{"ratio NaN", "MaxRatio", []hedge.Option[int, int]{d, hedge.MaxRatio(math.NaN())}},
		{"nil budget", "WithBudget", []hedge.Option[int, int]{d, hedge.WithBudget(nil)}},
		{"capacity", "Capacity", []hedge.Option[int, int]{d, hedge.Capacity(-1)}},
		{"nil Final", "Final", []hedge.Option[int, int]{d, hedge.Final[int](nilFinal)}},
		// A function of another type does not compile; converted by force,
		// it is New's error.
		{"Final of another type", "Final", []hedge.Option[int, int]{d, hedge.Option[int, int](hedge.Final[int](func(string, error) bool { return true }))}},
		{"Clone of another type", "Clone", []hedge.Option[int, int]{d, hedge.Option[int, int](hedge.Clone[string, int](func(s string) string { return s }))}},
		{"nil option", "option 2 of 2", []hedge.Option[int, int]{d, nil}},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				sys := troupetest.NewSystem(t)
				leaf := actors.Func(func(context.Context, int) (int, error) { return 0, nil })
				_, err := hedge.New[int, int](sys, leaf, c.opts...)
				troupetest.BadOption(t, err, "hedge", c.want)
				_, err = stages.Stack[int, int]().Hedge(c.opts...).Build(sys, leaf)
				troupetest.BadOption(t, err, "hedge", c.want)
			})
		})
	}
}

// spec: HR4, API1
func TestHR4_GoodOptionsBuild(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sys := troupetest.NewSystem(t)
		leaf := actors.Func(func(_ context.Context, v int) (int, error) { return v + 1, nil })
		st, err := stages.Stack[int, int]().Hedge(
			hedge.Percentile(95, 20), hedge.Delay(0), hedge.Window(time.Minute, hedge.MaxSamples),
			hedge.MaxHedges(hedge.MaxHedgesLimit), hedge.MaxRatio(1000), hedge.Capacity(8),
			hedge.Final[int](func(_ int, err error) bool { return err == nil }),
			hedge.Clone[int, int](func(v int) int { return v }),
		).Build(sys, leaf)
		require.NoError(t, err)
		out, err := troupe.Do(bg, st, 1)
		require.NoError(t, err)
		assert.Equal(t, 2, out)
		assert.Equal(t, 8, st.Stages()[0].Capacity)
		require.NoError(t, st.Close(bg))
	})
}
