package adaptive_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe/stages/adaptive"
	"github.com/troupe-go/troupe/troupetest"
)

// overMock spawns an adaptive limit over a mock that allows every
// reservation, with windows of samples samples, and runs its first probe
// window (calls answered at once), so that the limit is at its
// initial value when it returns.
func overMock(t *testing.T, samples int, opts ...adaptive.Option) (*adaptive.Adaptive[int, int], *troupetest.Handle[int, int]) {
	t.Helper()
	mock, h := troupetest.NewMock[int, int]()
	h.Allow(1 << 20)
	opts = append([]adaptive.Option{adaptive.Samples(samples)}, opts...)
	a, err := adaptive.New[int, int](troupetest.NewSystem(t), mock, opts...)
	require.NoError(t, err)
	for i := 0; a.Snapshot().Probing; i++ { // max(samples, min) calls
		require.Less(t, i, 1000)
		call := troupetest.Go(context.Background(), a, i)
		h.Next(context.Background()).Respond(i)
		require.NoError(t, (<-call).Err)
	}
	return a, h
}

// inFlight starts n calls on a and returns their outcomes and the
// requests the mock received, in order.
func inFlight(a *adaptive.Adaptive[int, int], h *troupetest.Handle[int, int], ctx context.Context, n int) ([]<-chan troupetest.Result[int], []*troupetest.Request[int, int]) {
	var outs []<-chan troupetest.Result[int]
	var reqs []*troupetest.Request[int, int]
	for i := range n {
		outs = append(outs, troupetest.Go(ctx, a, i))
		reqs = append(reqs, h.Next(context.Background()))
	}
	return outs, reqs
}
