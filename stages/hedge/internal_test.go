package hedge

import (
	"context"
	"runtime"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
)

// spec: H1
func TestH1_RankIsTheNearestRank(t *testing.T) {
	for _, c := range []struct {
		p    float64
		n, k int
	}{
		{95, 20, 19}, {90, 10, 9}, {90, 11, 10}, {50, 3, 2}, {50, 4, 2},
		{99.9, 1000, 999}, {99, 1000, 990}, {100, 7, 7}, {0.001, 7, 1}, {95, 1, 1},
	} {
		assert.Equal(t, c.k, rank(c.p, c.n), "p%v of %d", c.p, c.n)
	}
}

// spec: H1
func TestH1_WindowKeepsTheLastSamplesOfItsSpan(t *testing.T) {
	t0 := time.Unix(1000, 0)
	w := newWindow(time.Second, 4, t0)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	for i, d := range []time.Duration{40, 10, 30, 20} {
		w.record(at(time.Duration(i)*100*time.Millisecond), d*time.Millisecond)
	}
	d, n, ok := w.percentile(at(300*time.Millisecond), 50, 4)
	assert.Equal(t, []any{20 * time.Millisecond, 4, true}, []any{d, n, ok})
	w.record(at(400*time.Millisecond), 5*time.Millisecond) // full: the 40 ms sample goes
	d, n, _ = w.percentile(at(400*time.Millisecond), 100, 1)
	assert.Equal(t, []any{30 * time.Millisecond, 4}, []any{d, n})
	assert.Equal(t, []time.Duration{5, 10, 20, 30}, scaled(w.sorted))
	// The 10 ms sample (at 100 ms) expires at 1.1 s, the 30 ms one at 1.2 s.
	_, n, _ = w.percentile(at(1100*time.Millisecond), 50, 1)
	assert.Equal(t, 3, n)
	d, n, ok = w.percentile(at(1200*time.Millisecond), 50, 3)
	assert.Equal(t, []any{time.Duration(0), 2, false}, []any{d, n, ok}, "below the minimum")
	assert.Equal(t, 0, w.count(at(time.Hour)))
	d, n, ok = w.percentile(at(time.Hour), 50, 1)
	assert.Equal(t, []any{time.Duration(0), 0, false}, []any{d, n, ok})
}

func scaled(ds []time.Duration) []time.Duration {
	out := make([]time.Duration, len(ds))
	for i, d := range ds {
		out[i] = d / time.Millisecond
	}
	return out
}

// A lost attempt's context is cancelled, and a context derived from it
// follows at once, through AfterFunc (no goroutine); a won attempt's is
// settled: the stage's cancel no longer counts, and its channel, asked for
// before or after, follows only the request's context.
//
// spec: H1, EG13
func TestAttemptContextsLostCancelledWonFollowTheRequest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		parent, cancelParent := context.WithCancel(context.Background())
		type key struct{}
		parent = context.WithValue(parent, key{}, "v")

		lost := newAttemptCtx(parent)
		before := runtime.NumGoroutine()
		derived, stop := context.WithCancel(lost)
		defer stop()
		assert.Equal(t, before, runtime.NumGoroutine(), "registered through AfterFunc: no goroutine")
		assert.Equal(t, "v", lost.Value(key{}))
		assert.NoError(t, lost.Err())
		lost.lost()
		assert.ErrorIs(t, lost.Err(), context.Canceled)
		assert.ErrorIs(t, derived.Err(), context.Canceled, "a derived context follows at once")
		<-lost.Done()

		won := newAttemptCtx(parent)
		done := won.Done() // linked to the parent
		won.Settle()
		won.lost() // too late: a settled context is never cancelled by the stage
		assert.NoError(t, won.Err())
		late := newAttemptCtx(parent)
		late.Settle()
		followed := late.Done() // asked after it settled

		cancelParent()
		synctest.Wait()
		<-done
		<-followed
		assert.ErrorIs(t, won.Err(), context.Canceled, "the request's cancellation ends it")
		assert.ErrorIs(t, late.Err(), context.Canceled)
	})
}
