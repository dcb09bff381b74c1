package hedge_test

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/stages"
	"github.com/troupe-go/troupe/stages/hedge"
	"github.com/troupe-go/troupe/troupetest"
)

// Every request's original and hedge end at the same instant, on two
// goroutines, for many requests at once, with a concurrency limit inside
// the stage: each caller gets one outcome, from one of its attempts, and
// every slot comes back.
//
// spec: H1, CORE6
func TestCORE6_OriginalAndHedgeEndingTogetherGiveOneOutcome(t *testing.T) {
	const n = 64
	synctest.Test(t, func(t *testing.T) {
		var attempts [n]atomic.Int32
		fn := actors.Func(func(ctx context.Context, v int) (int, error) {
			k := attempts[v].Add(1) // 1: the original, sent at 0; 2: the hedge, at 10 ms
			select {
			case <-time.After(time.Duration(3-k) * 10 * ms): // both end at 20 ms
				return 10*v + int(k), nil
			case <-ctx.Done():
				return 0, ctx.Err()
			}
		})
		st, err := stages.Stack[int, int]().Hedge(hedge.Delay(10*ms), hedge.NoBudget()).Limit(2*n).Build(troupetest.NewSystem(t), fn)
		require.NoError(t, err)
		var got [n]<-chan troupetest.Result[int]
		for v := range n {
			got[v] = troupetest.Go(bg, st, v)
		}
		won := 0
		for v := range n {
			r := <-got[v]
			require.NoError(t, r.Err)
			require.Contains(t, []int{10*v + 1, 10*v + 2}, r.Value)
			if r.Value == 10*v+2 {
				won++
			}
		}
		synctest.Wait()
		for v := range n {
			assert.Equal(t, int32(2), attempts[v].Load())
		}
		info := st.Stages()
		require.Len(t, info, 2)
		assert.Equal(t, hedge.Counts{Hedges: n, Won: uint64(won), Budget: -1}, info[0].Detail)
		assert.Equal(t, 0, info[0].Used, "the hedge stage holds nothing")
		assert.Equal(t, 0, info[1].Used, "the limit's slots all came back")
		require.NoError(t, st.Close(bg))
	})
}
