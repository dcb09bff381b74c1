package stagekit_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors/stagekit"
	"github.com/troupe-go/troupe/troupetest"
)

// holding spawns a HoldUntilOutcome stage of capacity n over a function
// that answers its request, or fails for a negative one.
func holding(t *testing.T, n int) *stagekit.Stage[int, int] {
	t.Helper()
	sys := troupetest.NewSystem(t)
	leaf := stagekit.Func(func(_ context.Context, v int) (int, error) {
		if v < 0 {
			return 0, errors.New("failed")
		}
		return v, nil
	})
	s, err := stagekit.Spawn[int, int](sys, stagekit.Config{Name: "limit", Capacity: n, HoldUntilOutcome: true}, leaf, stagekit.Passthrough[int, int]{})
	require.NoError(t, err)
	return s
}

// A call made with a Hold's context keeps a HoldUntilOutcome stage's slot
// past its outcome, until the Hold is released; an outcome the Hold does
// not keep (an error, here) frees it at once, and so does a slot offered
// after the release.
func TestAHoldKeepsAStagesSlotUntilItIsReleased(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := holding(t, 2)
		ctx, h := stagekit.WithHold(context.Background(), func(_ int, err error) bool { return err == nil })
		v, err := troupe.Do(ctx, s, 7)
		require.NoError(t, err)
		assert.Equal(t, 7, v)
		assert.Equal(t, 1, stagekit.MailboxOf(s).Stats().Used, "kept past the outcome")
		assert.Equal(t, 1, h.Kept())

		ctx2, h2 := stagekit.WithHold(context.Background(), func(_ int, err error) bool { return err == nil })
		_, err = troupe.Do(ctx2, s, -1)
		require.Error(t, err)
		assert.Equal(t, 1, stagekit.MailboxOf(s).Stats().Used, "an outcome the Hold does not keep frees its slot")
		assert.Zero(t, h2.Kept())

		h.Release()
		h.Release()
		assert.Zero(t, stagekit.MailboxOf(s).Stats().Used, "released once")
		assert.Zero(t, h.Kept())

		_, err = troupe.Do(ctx, s, 8) // the same, released, Hold
		require.NoError(t, err)
		assert.Zero(t, stagekit.MailboxOf(s).Stats().Used, "nothing is kept by a released Hold")
	})
}

// HoldFor and Keep, for stages that give back something of their own:
// Keep keeps what it is given while the Hold is live, and it runs once at
// the release; HoldFor finds a Hold only for an outcome it keeps, of its
// response type.
func TestAHoldRunsWhatItKeptOnceAtTheRelease(t *testing.T) {
	var runs int
	release := func() { runs++ }
	assert.Nil(t, stagekit.HoldFor(context.Background(), 1, nil), "no Hold")
	ctx, h := stagekit.WithHold(context.Background(), func(_ int, err error) bool { return err == nil })
	assert.Nil(t, stagekit.HoldFor(ctx, "another type", nil))
	assert.Nil(t, stagekit.HoldFor(ctx, 1, errors.New("failed")), "an outcome it does not keep")
	require.Same(t, h, stagekit.HoldFor(ctx, 1, nil))
	require.Same(t, h, stagekit.HoldFor(context.WithValue(ctx, struct{}{}, 0), 2, nil), "a derived context")
	assert.True(t, h.Keep(release))
	assert.True(t, h.Keep(release))
	assert.Zero(t, runs)
	h.Release()
	assert.Equal(t, 2, runs)
	assert.False(t, h.Keep(release))
	h.Release()
	assert.Equal(t, 2, runs)
}
