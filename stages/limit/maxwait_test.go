package limit_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/stages"
	"github.com/troupe-go/troupe/stages/limit"
	"github.com/troupe-go/troupe/troupetest"
)

// A caller that waited the maximum wait for a permit is refused with an
// error matching troupe.ErrFull, a Reserve as a call through the stage;
// one granted a permit within it is not (failsafe-go's bulkhead
// TestAcquirePermitWithMaxWaitTime: the first waits 0, the second is
// refused after 100 ms).
//
// spec: PP2
func TestMaxWaitRefusesACallerThatWaitedItForAPermit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		api := actors.Func(func(_ context.Context, v int) (int, error) { return v, nil })
		l, err := limit.New[int, int](troupetest.NewSystem(t), api, 1, limit.MaxWait(100*time.Millisecond))
		require.NoError(t, err)
		p, err := l.Reserve(ctx) // waits 0
		require.NoError(t, err)
		start := time.Now()
		_, err = l.Reserve(ctx) // waits 100 ms
		assert.ErrorIs(t, err, troupe.ErrFull)
		assert.Equal(t, 100*time.Millisecond, time.Since(start))

		start = time.Now()
		call := troupetest.Go(ctx, l, 1)
		assert.ErrorIs(t, (<-call).Err, troupe.ErrFull, "a call waits in line as long")
		assert.Equal(t, 100*time.Millisecond, time.Since(start))

		late := troupetest.Go(ctx, l, 2)
		time.Sleep(60 * time.Millisecond)
		require.NoError(t, p.Release())
		assert.Equal(t, troupetest.Result[int]{Value: 2}, <-late, "granted within its maximum wait")
		time.Sleep(time.Second) // its timer, stopped, refuses nothing later
		assert.Equal(t, 1, l.Available())
	})
}

// Inside a stack the maximum wait holds for a request the stage outside
// parked for a permit: that stage answers it with the refusal and carries
// on with the next.
//
// spec: PP2
func TestMaxWaitRefusesARequestParkedByTheStageOutside(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		mock, h := troupetest.NewMock[int, int]()
		st, err := stages.Stack[int, int]().Buffer(4).Limit(1, limit.MaxWait(50*time.Millisecond)).Build(troupetest.NewSystem(t), mock)
		require.NoError(t, err)
		h.Allow(10)
		a := troupetest.Go(ctx, st, 1)
		ra := h.Next(ctx)
		start := time.Now()
		b := troupetest.Go(ctx, st, 2)
		assert.ErrorIs(t, (<-b).Err, troupe.ErrFull)
		assert.Equal(t, 50*time.Millisecond, time.Since(start))
		c := troupetest.Go(ctx, st, 3)
		synctest.Wait()
		ra.Respond(1)
		rc := h.Next(ctx)
		rc.Respond(3)
		assert.Equal(t, troupetest.Result[int]{Value: 1}, <-a)
		assert.Equal(t, troupetest.Result[int]{Value: 3}, <-c, "the stage outside carried on")
		require.NoError(t, st.Close(ctx))
	})
}

func TestNegativeMaxWaitIsBadConfig(t *testing.T) {
	api := actors.Func(func(_ context.Context, v int) (int, error) { return v, nil })
	_, err := limit.New[int, int](nil, api, 1, limit.MaxWait(-1))
	troupetest.BadOption(t, err, "limit", "MaxWait")
}
