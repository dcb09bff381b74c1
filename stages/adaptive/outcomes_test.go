package adaptive_test

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
	"github.com/troupe-go/troupe/stages/adaptive"
	"github.com/troupe-go/troupe/stages/timeout"
	"github.com/troupe-go/troupe/troupetest"
)

// spec: AL1
// An error cuts the limit multiplicatively (AIMD), once for the calls sent
// under one limit: those sent before a cut do not cut again.
func TestAL1_ErrorsCutTheLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, h := overMock(t, 1, adaptive.Initial(10))
		ctx := context.Background()
		outs, reqs := inFlight(a, h, ctx, 3)

		reqs[0].Fail(errOverload)
		assert.ErrorIs(t, (<-outs[0]).Err, errOverload, "the error passes unchanged")
		assert.Equal(t, 9, a.Limit(), "10 * 0.9")
		reqs[1].Fail(errOverload)
		<-outs[1]
		assert.Equal(t, 9, a.Limit(), "sent before the cut: no second cut")

		out := troupetest.Go(ctx, a, 3)
		h.Next(ctx).Fail(errOverload)
		<-out
		assert.Equal(t, 8, a.Limit(), "sent after the cut: 9 * 0.9 is 8.1")
		assert.Equal(t, uint64(2), a.Snapshot().Cuts)

		reqs[2].Respond(2)
		require.NoError(t, (<-outs[2]).Err)
		synctest.Wait()
		assert.Equal(t, 8, a.Available())
	})
}

// spec: AL1
// The backoff ratio sets the cut, which takes at least one off the limit.
func TestAL1_BackoffSetsTheCut(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, h := overMock(t, 1, adaptive.Initial(10), adaptive.Backoff(0.5), adaptive.Limits(3, 50))
		ctx := context.Background()
		for _, want := range []int{5, 3, 3} { // 10 / 2, 5 / 2 is 2: the min
			out := troupetest.Go(ctx, a, 0)
			h.Next(ctx).Fail(errOverload)
			<-out
			assert.Equal(t, want, a.Limit())
		}
		b, hb := overMock(t, 1, adaptive.Initial(4), adaptive.Backoff(0.99))
		out := troupetest.Go(ctx, b, 0)
		hb.Next(ctx).Fail(errOverload)
		<-out
		assert.Equal(t, 3, b.Limit(), "4 * 0.99 is 3.96: at least one off")
	})
}

// spec: AL1
// A call its caller cancels tells nothing about the service inside: the
// limit does not move, and its permit comes back.
func TestAL1_CallerCancellationDoesNotCut(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, h := overMock(t, 1, adaptive.Initial(10))
		cctx, cancel := context.WithCancel(context.Background())
		out := troupetest.Go(cctx, a, 1)
		h.Next(context.Background())
		assert.Equal(t, 9, a.Available())
		cancel()
		assert.ErrorIs(t, (<-out).Err, context.Canceled)
		synctest.Wait()
		assert.Equal(t, 10, a.Limit())
		assert.Zero(t, a.Snapshot().Cuts)
		assert.Zero(t, a.Snapshot().InFlight)
		assert.Equal(t, 10, a.Available())
	})
}

// spec: AL1
// Classify decides which errors are drops; the others count as completed
// calls.
func TestAL1_ClassifyDecidesWhichErrorsCut(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		notFound := errors.New("not found")
		a, h := overMock(t, 1, adaptive.Initial(10),
			adaptive.Classify(func(err error) bool { return errors.Is(err, errOverload) }))
		ctx := context.Background()
		out := troupetest.Go(ctx, a, 1)
		h.Next(ctx).Fail(notFound)
		assert.ErrorIs(t, (<-out).Err, notFound)
		assert.Equal(t, 10, a.Limit(), "not a drop")

		out = troupetest.Go(ctx, a, 2)
		h.Next(ctx).Fail(errOverload)
		assert.ErrorIs(t, (<-out).Err, errOverload)
		assert.Equal(t, 9, a.Limit(), "a drop")
		assert.Equal(t, uint64(1), a.Snapshot().Cuts)
	})
}

// spec: AL1, T4
// A timeout inside the limit is a drop: its error cuts the limit.
func TestAL1_ATimeoutBelowCuts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sys := troupetest.NewSystem(t)
		slow := actors.Func(func(ctx context.Context, v int) (int, error) {
			if v == 0 {
				return v, nil // the probe
			}
			<-ctx.Done()
			return 0, ctx.Err()
		})
		tm, err := timeout.New[int, int](sys, slow, 50*time.Millisecond)
		require.NoError(t, err)
		a, err := adaptive.New[int, int](sys, tm, adaptive.Samples(1), adaptive.Initial(10))
		require.NoError(t, err)
		_, err = troupe.Do(context.Background(), a, 0)
		require.NoError(t, err)
		require.Equal(t, 10, a.Limit())

		res := troupetest.GoTimed(context.Background(), a, 1)
		r := <-res
		assert.ErrorIs(t, r.Err, timeout.ErrTimeout)
		assert.GreaterOrEqual(t, r.Took, 50*time.Millisecond)
		assert.Less(t, r.Took, 51*time.Millisecond)
		assert.Equal(t, 9, a.Limit())
		require.NoError(t, tm.Close(context.Background()))
	})
}

// spec: AL1
// Windows move the limit as measured: a window at the baseline latency
// grows it by one; a window whose latency says calls queue beyond beta
// shrinks it.
func TestAL1_LatencyMovesTheLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lat := 10 * time.Millisecond
		svc := actors.Func(func(_ context.Context, v int) (int, error) {
			time.Sleep(lat)
			return v, nil
		})
		a, err := adaptive.New[int, int](troupetest.NewSystem(t), svc, adaptive.Initial(4), adaptive.Samples(4))
		require.NoError(t, err)
		ctx := context.Background()
		round := func() { // a window: the limit's worth of calls at once
			var chans []<-chan troupetest.Result[int]
			for i := range a.Limit() {
				chans = append(chans, troupetest.Go(ctx, a, i))
			}
			for _, ch := range chans {
				require.NoError(t, (<-ch).Err)
			}
		}
		for range 4 { // the probe: four calls at the min, one at a time
			round()
		}
		require.Equal(t, 4, a.Limit())
		s := a.Snapshot()
		assert.Equal(t, lat, s.Baseline)

		round()
		assert.Equal(t, 5, a.Limit(), "no queue, the limit used: one more")
		// At a limit of 5, alpha = 3*log10(5) = 2.1 and beta = 4.2.
		lat = 30 * time.Millisecond // q = 5 * (1 - 10/30) = 3.3
		round()
		assert.Equal(t, 5, a.Limit(), "3.3 queued: between alpha and beta, it holds")
		lat = 100 * time.Millisecond // q = 5 * (1 - 10/100) = 4.5
		round()
		assert.Equal(t, 4, a.Limit(), "4.5 queued, above beta: one less")
		assert.Equal(t, 100*time.Millisecond, a.Snapshot().Latency)
		assert.Equal(t, 10*time.Millisecond, a.Snapshot().Baseline)
	})
}
