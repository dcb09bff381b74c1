package troupe_test

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/troupetest"
)

// spec: CORE4
func TestCORE4_ReleaseGivesCapacityBackAtOnce(t *testing.T) {
	sys := newSystem(t)
	b, c := newBuffer(t, sys, 1)
	p, err := b.Reserve(context.Background())
	require.NoError(t, err)
	done, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = b.Reserve(done)
	require.ErrorIs(t, err, context.Canceled, "the only slot is reserved")
	require.NoError(t, p.Release())
	q, err := b.Reserve(done)
	require.NoError(t, err, "released capacity is available at once, without waiting")
	require.NoError(t, q.Release())
	assert.Zero(t, c.calls.Load())
}

// releaser is a Reservation that reports its releases.
type releaser struct{ released chan struct{} }

func (r *releaser) Call(context.Context, int) (int, error) { return 0, nil }
func (r *releaser) Release()                               { r.released <- struct{}{} }

// spec: CORE4
func TestCORE4_DroppedPermitIsReclaimed(t *testing.T) {
	troupetest.ExpectDropped(1)
	var src troupe.PermitSource[int, int]
	r := &releaser{released: make(chan struct{}, 1)}
	before := troupe.LeakedPermits()
	func() {
		p := src.Issue(r)
		_ = p // dropped without Call or Release
	}()
	waitGC(t, r.released)
	assert.Equal(t, before+1, troupe.LeakedPermits())
}

// spec: CORE4
func TestCORE4_DroppedPermitFreesStageSlot(t *testing.T) {
	troupetest.ExpectDropped(1)
	sys := newSystem(t)
	b, _ := newBuffer(t, sys, 1)
	func() {
		_, err := b.Reserve(context.Background())
		require.NoError(t, err)
	}() // the permit is dropped: the only slot is lost, until the collector finds it
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	got := make(chan struct{})
	go func() {
		if p, err := b.Reserve(ctx); err == nil { // waits for the reclaimed slot
			_ = p.Release()
			close(got)
		}
	}()
	waitGC(t, got)
}

// waitGC runs the garbage collector until ch receives, or fails.
func waitGC(t *testing.T, ch <-chan struct{}) {
	t.Helper()
	for range 50 {
		runtime.GC()
		select {
		case <-ch:
			return
		case <-time.After(10 * time.Millisecond):
		}
	}
	t.Fatal("the dropped permit was never reclaimed")
}

func TestPermitSourceIssuesDistinctPermits(t *testing.T) {
	var src troupe.PermitSource[int, int]
	r := &releaser{released: make(chan struct{}, 200)}
	seen := map[*troupe.Permit[int, int]]bool{}
	for range 200 { // several slabs
		p := src.Issue(r)
		require.False(t, seen[p])
		seen[p] = true
	}
	for p := range seen {
		require.NoError(t, p.Release())
	}
	assert.Len(t, r.released, 200)
}

// spec: EG8
func TestAPermitSourceKnowsWhetherAPermitIsStillOut(t *testing.T) {
	var src troupe.PermitSource[int, int]
	r := &releaser{released: make(chan struct{}, 200)}
	assert.False(t, src.Issued())
	assert.False(t, src.Outstanding())
	var ps []*troupe.Permit[int, int]
	for range 200 { // several slabs
		ps = append(ps, src.Issue(r))
	}
	assert.True(t, src.Issued())
	for _, p := range ps[:199] {
		require.NoError(t, p.Release())
	}
	assert.True(t, src.Outstanding(), "one is still out")
	require.NoError(t, ps[199].Release())
	assert.False(t, src.Outstanding(), "all used")
	assert.True(t, src.Issued(), "issued stays true")
}
