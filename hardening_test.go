package troupe_test

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/stages/limit"
	"github.com/troupe-go/troupe/stages/ratelimit"
	"github.com/troupe-go/troupe/stages/retry"
	"github.com/troupe-go/troupe/stages/timeout"
)

// A user who asks for 300 calls in flight gets 300, whatever the defaults of
// the stages inside the limit.
//
// spec: HR5
func TestHR5_InnerStageDefaultsDoNotCapAnOuterLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const n = 300
		sys := actors.NewSystem()
		var mu sync.Mutex
		inside, peak := 0, 0
		release := make(chan struct{})
		api := actors.Func(func(ctx context.Context, v int) (int, error) {
			mu.Lock()
			inside++
			peak = max(peak, inside)
			mu.Unlock()
			<-release
			mu.Lock()
			inside--
			mu.Unlock()
			return v, nil
		})
		st, err := troupe.NewBuilder[int, int]().
			Layer(limit.Layer[int, int](n)).
			Layer(timeout.Layer[int, int](time.Minute)).
			Layer(retry.Layer[int, int](retry.Attempts[int, int]{Max: 3})).
			Layer(ratelimit.Layer[int, int](ratelimit.Rate{Num: 1_000_000, Per: time.Second})).
			Build(sys, api)
		require.NoError(t, err)
		var wg sync.WaitGroup
		for i := range n + 50 {
			wg.Go(func() { _, _ = troupe.Do(context.Background(), st, i) })
		}
		synctest.Wait()
		mu.Lock()
		got := inside
		mu.Unlock()
		assert.Equal(t, n, got, "the downstream sees as many calls as the outer limit admits")
		close(release)
		wg.Wait()
		require.NoError(t, st.Close(context.Background()))
		require.NoError(t, sys.Shutdown(context.Background()))
		assert.Equal(t, n, peak)
	})
}
