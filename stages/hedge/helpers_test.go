package hedge_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe/stages/hedge"
	"github.com/troupe-go/troupe/troupetest"
)

const ms = time.Millisecond

var bg = context.Background()

// overMock returns a hedging stage over a mock and the mock's handle.
func overMock(t *testing.T, opts ...hedge.Option[int, int]) (*hedge.Hedge[int, int], *troupetest.Handle[int, int]) {
	t.Helper()
	mock, h := troupetest.NewMock[int, int]()
	x, err := hedge.New[int, int](troupetest.NewSystem(t), mock, opts...)
	require.NoError(t, err)
	return x, h
}

// next returns the next request the mock received, which must have
// arrived already (the bubble is idle).
func next(t *testing.T, h *troupetest.Handle[int, int]) *troupetest.Request[int, int] {
	t.Helper()
	synctest.Wait()
	r := h.TryNext()
	require.NotNil(t, r, "no request reached the mock")
	return r
}

// none asserts that no request reached the mock.
func none(t *testing.T, h *troupetest.Handle[int, int], msg string) {
	t.Helper()
	synctest.Wait()
	require.Nil(t, h.TryNext(), msg)
}

// pending asserts that the call has no outcome yet.
func pending[Res any](t *testing.T, c <-chan troupetest.Result[Res], msg string) {
	t.Helper()
	synctest.Wait()
	select {
	case r := <-c:
		t.Fatalf("%s: got an outcome already: %+v", msg, r)
	default:
	}
}

// sample makes one successful request that the mock answers after d: one
// latency sample of d.
func sample(t *testing.T, x *hedge.Hedge[int, int], h *troupetest.Handle[int, int], d time.Duration) {
	t.Helper()
	h.Allow(1)
	got := troupetest.Go(bg, x, int(d/ms))
	r := next(t, h)
	time.Sleep(d)
	r.Respond(r.Value)
	require.Equal(t, troupetest.Result[int]{Value: int(d / ms)}, <-got)
}
