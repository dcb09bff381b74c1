package hedge

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/troupetest"
)

// A request answered before its delay leaves the pending hedges at once,
// not at its due time: after many fast requests nothing is pending, no
// timer is due for them, and their sessions are back in the pool. One in
// flight is pending until its outcome, and not a moment longer.
//
// spec: H1
func TestH1_AFinishedSessionLeavesThePendingHedgesAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sys := troupetest.NewSystem(t)
		echo := actors.Func(func(_ context.Context, v int) (int, error) { return v, nil })
		x, err := New[int, int](sys, echo, Delay(time.Hour), NoBudget())
		require.NoError(t, err)
		for i := range 1000 {
			out, err := troupe.Do(context.Background(), x, i)
			require.NoError(t, err)
			require.Equal(t, i, out)
		}
		assert.Equal(t, 0, x.b.pendingCount(), "every session left the pending hedges as it finished")
		assert.Equal(t, Counts{Budget: -1}, x.Counts())

		mock, h := troupetest.NewMock[int, int]()
		y, err := New[int, int](sys, mock, Delay(time.Hour), NoBudget())
		require.NoError(t, err)
		h.Allow(1)
		got := troupetest.Go(context.Background(), y, 7)
		synctest.Wait()
		r := h.TryNext()
		require.NotNil(t, r)
		assert.Equal(t, 1, y.b.pendingCount(), "in flight: its hedge is pending")
		r.Respond(70)
		assert.Equal(t, troupetest.Result[int]{Value: 70}, <-got)
		assert.Equal(t, 0, y.b.pendingCount(), "answered: it left at once, an hour before its hedge was due")
		require.NoError(t, x.Close(context.Background()))
		require.NoError(t, y.Close(context.Background()))
	})
}

// The pending list keeps its sessions by due time, ties in the order they
// came, whatever the order of inserts (a percentile delay that changes)
// and removals from anywhere (sessions that end); the first due is taken
// first.
//
// spec: H1
func TestH1_PendingHedgesStayInDueOrder(t *testing.T) {
	t0 := time.Unix(1000, 0)
	r := rand.New(rand.NewPCG(1, 2))
	var l pendingList[int, int]
	var want []*session[int, int] // in due order, ties in insert order
	check := func() {
		t.Helper()
		var got []*session[int, int]
		for ss := l.first(); ss != nil; ss = l.list.Next(&ss.pend) {
			got = append(got, ss)
		}
		require.True(t, slices.Equal(want, got), "in due order")
		require.Equal(t, len(want), l.len())
		if len(want) > 0 {
			require.Same(t, want[len(want)-1], l.list.Back())
		} else {
			require.Nil(t, l.list.Back())
		}
	}
	for range 3000 {
		switch op := r.IntN(10); {
		case op < 6: // insert, mostly near the tail, sometimes anywhere
			due := t0.Add(time.Duration(len(want)+r.IntN(3)) * time.Millisecond)
			if op == 0 {
				due = t0.Add(time.Duration(r.IntN(len(want)+1)) * time.Millisecond)
			}
			ss := &session[int, int]{}
			first := l.insert(ss, due)
			i, _ := slices.BinarySearchFunc(want, due, func(x *session[int, int], d time.Time) int {
				if x.due.After(d) {
					return 1
				}
				return -1 // equal dues stay before: ties in insert order
			})
			want = slices.Insert(want, i, ss)
			assert.Equal(t, i == 0, first, "first reports a new head")
		case op < 9 && len(want) > 0: // a session ends, wherever it is
			i := r.IntN(len(want))
			l.remove(want[i])
			assert.False(t, want[i].pend.Listed())
			want = slices.Delete(want, i, i+1)
		case len(want) > 0: // the alarm: the first due goes
			now := want[0].due
			assert.Nil(t, l.popDue(now.Add(-time.Nanosecond)), "not due yet")
			assert.Same(t, want[0], l.popDue(now))
			want = want[1:]
		}
		check()
	}
}
