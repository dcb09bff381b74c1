package hedge_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe/stages/hedge"
	"github.com/troupe-go/troupe/stages/retry/budget"
	"github.com/troupe-go/troupe/troupetest"
)

// slowRequests makes n requests one after the other, each of whose
// original answers only after 50 ms, past the 10 ms delay, and reports
// which of them were hedged (the hedge then answers at once and wins).
func slowRequests(t *testing.T, x *hedge.Hedge[int, int], h *troupetest.Handle[int, int], n int) []bool {
	t.Helper()
	hedged := make([]bool, n)
	for i := range n {
		h.Allow(2)
		got := troupetest.Go(bg, x, i)
		orig := next(t, h)
		time.Sleep(10 * ms)
		synctest.Wait()
		if r := h.TryNext(); r != nil {
			hedged[i] = true
			r.Respond(i)
		} else {
			time.Sleep(40 * ms)
			orig.Respond(i)
			h.Allow(-1) // the hedge's unit, unused
		}
		require.Equal(t, troupetest.Result[int]{Value: i}, <-got)
	}
	return hedged
}

// every returns n flags, true at every k-th.
func every(k, n int) []bool {
	out := make([]bool, n)
	for i := k - 1; i < n; i += k {
		out[i] = true
	}
	return out
}

// spec: H2
func TestH2_TheBudgetBoundsHedgesToAFractionOfRequests(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		x, h := overMock(t, hedge.Delay(10*ms), hedge.MaxRatio(0.25))
		assert.Equal(t, every(4, 12), slowRequests(t, x, h, 12), "one request in four may be hedged")
		c := x.Counts()
		assert.Equal(t, hedge.Counts{Hedges: 3, Won: 3, Refused: 9, Budget: 0}, c)
	})
}

// spec: H2
func TestH2_TheDefaultBudgetIsOneHedgeInTen(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		x, h := overMock(t, hedge.Delay(10*ms))
		assert.Equal(t, every(10, 20), slowRequests(t, x, h, 20))
		assert.Equal(t, hedge.Counts{Hedges: 2, Won: 2, Refused: 18, Budget: 0}, x.Counts())
		// The budget's window is 10 s: the requests made in it are forgotten.
		time.Sleep(10 * time.Second)
		assert.Equal(t, every(10, 10), slowRequests(t, x, h, 10))
	})
}

// spec: H2
func TestH2_ABudgetSharedByTwoStages(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, err := budget.New(time.Second, 0, 0.5)
		require.NoError(t, err)
		x1, h1 := overMock(t, hedge.Delay(10*ms), hedge.WithBudget(b))
		x2, h2 := overMock(t, hedge.Delay(10*ms), hedge.WithBudget(b))
		assert.Equal(t, []bool{false}, slowRequests(t, x1, h1, 1), "half a hedge deposited")
		assert.Equal(t, []bool{true}, slowRequests(t, x2, h2, 1), "the other stage's request completes it")
		assert.Equal(t, int64(0), b.Remaining())
		assert.Equal(t, hedge.Counts{Hedges: 1, Won: 1, Budget: 0}, x2.Counts())
	})
}

// spec: H1, H2
func TestH2_WithNoBudgetEveryRequestIsHedged(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		x, h := overMock(t, hedge.Delay(10*ms), hedge.NoBudget())
		assert.Equal(t, every(1, 5), slowRequests(t, x, h, 5))
		assert.Equal(t, hedge.Counts{Hedges: 5, Won: 5, Budget: -1}, x.Counts())
	})
}
