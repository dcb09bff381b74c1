package adaptive_test

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
	"github.com/troupe-go/troupe/stages/adaptive"
	"github.com/troupe-go/troupe/troupetest"
)

// spec: HR4, CORE9
// A bad option is an error at construction, a *troupe.ConfigError naming
// the option and matching troupe.ErrBadConfig, never a panic or another
// value.
func TestHR4_BadConfigurationIsAnError(t *testing.T) {
	f := actors.Func(func(_ context.Context, v int) (int, error) { return v, nil })
	for _, c := range []struct {
		name string
		opt  adaptive.Option
		want string // the option refused
	}{
		{"min 0", adaptive.Limits(0, 10), "Limits"},
		{"max below min", adaptive.Limits(5, 4), "Limits"},
		{"max above MaxLimit", adaptive.Limits(1, adaptive.MaxLimit+1), "Limits"},
		{"initial below min", adaptive.Initial(0), "Initial"},
		{"initial above max", adaptive.Initial(adaptive.DefaultMax + 1), "Initial"},
		{"backoff 0", adaptive.Backoff(0), "Backoff"},
		{"backoff 1", adaptive.Backoff(1), "Backoff"},
		{"backoff NaN", adaptive.Backoff(math.NaN()), "Backoff"},
		{"samples 0", adaptive.Samples(0), "Samples"},
		{"probe 0", adaptive.ProbeEvery(0), "ProbeEvery"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := adaptive.New[int, int](nil, f, c.opt)
			troupetest.BadOption(t, err, "adaptive", c.want)
			_, err = stages.Stack[int, int]().Adaptive(c.opt).Build(troupetest.NewSystem(t), f)
			troupetest.BadOption(t, err, "adaptive", c.want)
		})
	}
	_, err := adaptive.New[int, int](nil, nil)
	assert.ErrorIs(t, err, troupe.ErrBadConfig, "a nil inner service")
}

// spec: AL1
// The default initial limit is taken into the limits when it lies
// outside them; the first probe runs at the min.
func TestAL1_DefaultsWithinTheLimits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, _ := overMock(t, 1, adaptive.Limits(1, 8))
		assert.Equal(t, 8, a.Limit())
		b, _ := overMock(t, 1, adaptive.Limits(30, 40))
		assert.Equal(t, 30, b.Limit())
		s := b.Snapshot()
		assert.Equal(t, [2]int{30, 40}, [2]int{s.Min, s.Max})
		assert.Equal(t, s, b.Stats().Detail)
	})
}

// spec: AL1, ACT3, C2
// While the inner service is not ready, requests wait in the stage, in
// order, each holding its permit; one whose caller gives up is answered at
// once and its permit comes back.
func TestAL1_WaitsForTheInnerService(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mock, h := troupetest.NewMock[int, int]()
		a, err := adaptive.New[int, int](troupetest.NewSystem(t), mock, adaptive.Samples(1), adaptive.Initial(5))
		require.NoError(t, err)
		ctx := context.Background()
		h.Allow(1)
		out := troupetest.Go(ctx, a, 0) // the probe
		h.Next(ctx).Respond(0)
		require.NoError(t, (<-out).Err)

		first := troupetest.Go(ctx, a, 1)
		synctest.Wait()
		cctx, cancel := context.WithCancel(ctx)
		second := troupetest.Go(cctx, a, 2)
		synctest.Wait()
		assert.Equal(t, 3, a.Available())
		cancel()
		assert.ErrorIs(t, (<-second).Err, context.Canceled)
		synctest.Wait()
		assert.Equal(t, 4, a.Available(), "the permit came back at once")

		h.Allow(1)
		r := h.Next(ctx)
		assert.Equal(t, 1, r.Value)
		r.Respond(1)
		assert.NoError(t, (<-first).Err)
		synctest.Wait()
		assert.Equal(t, 5, a.Available())
		assert.Zero(t, h.Allowed(), "no unit of the inner service kept")
	})
}

// spec: HR2, ACT5
// Close drains: calls in flight run to their outcome, and Close returns
// nil once they have.
func TestHR2_CloseDrains(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, h := overMock(t, 1, adaptive.Initial(4))
		ctx := context.Background()
		outs, reqs := inFlight(a, h, ctx, 2)
		closed := make(chan error, 1)
		go func() { closed <- a.Close(ctx) }()
		synctest.Wait()
		_, err := a.Reserve(ctx)
		assert.ErrorIs(t, err, troupe.ErrClosed, "no new reservation")
		select {
		case <-closed:
			t.Fatal("Close returned with calls in flight")
		default:
		}
		for i, r := range reqs {
			r.Respond(i)
			assert.NoError(t, (<-outs[i]).Err)
		}
		assert.NoError(t, <-closed)
	})
}

// spec: HR2, ACT5
// When Close's context ends, the requests waiting in the stage get
// ErrClosed, and Close says so.
func TestHR2_CloseAnswersWhatWaits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mock, h := troupetest.NewMock[int, int]()
		a, err := adaptive.New[int, int](troupetest.NewSystem(t), mock, adaptive.Samples(1), adaptive.Initial(5))
		require.NoError(t, err)
		ctx := context.Background()
		var outs []<-chan troupetest.Result[int]
		for i := range 3 { // the inner service is not ready: they wait in the stage
			outs = append(outs, troupetest.Go(ctx, a, i))
		}
		synctest.Wait()
		dctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		err = a.Close(dctx)
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		for _, out := range outs {
			assert.ErrorIs(t, (<-out).Err, troupe.ErrClosed)
		}
		h.Allow(1)
		synctest.Wait()
		assert.Equal(t, 1, h.Allowed(), "no unit of the inner service kept")
	})
}
