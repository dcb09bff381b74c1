package stagekit_test

import (
	"context"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors/stagekit"
	"github.com/troupe-go/troupe/troupetest"
)

// spec: CORE8, CORE1
func TestCORE8_DoWaitsInLineAndIsSentByWhoeverFreesTheSlot(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, s, h := overMock(t, 1)
		ctx := context.Background()
		a := troupetest.Go[int, int](ctx, s, 1) // parks in the stage: the mock allows nothing yet
		synctest.Wait()
		b := troupetest.Go[int, int](ctx, s, 2) // no slot: the request itself waits in line
		synctest.Wait()
		assert.Equal(t, 1, stagekit.MailboxOf(s).Stats().Waiting)
		assert.Equal(t, 1, stagekit.MailboxOf(s).Stats().Used)

		h.Allow(2)
		reqs := []*troupetest.Request[int, int]{h.Next(ctx), h.Next(ctx)} // b was sent when a's slot was freed
		for _, r := range reqs {
			r.Respond(r.Value * 10)
		}
		assert.Equal(t, 10, (<-a).Value)
		assert.Equal(t, 20, (<-b).Value)
		synctest.Wait()
		assert.Equal(t, 0, stagekit.MailboxOf(s).Stats().Used)
	})
}

// spec: CORE8, CORE1, ACT5
func TestCORE8_DoGivingUpInLineHoldsNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, s, h := overMock(t, 1)
		ctx := context.Background()
		a := troupetest.Go[int, int](ctx, s, 1) // parks in the stage, holding its only slot
		synctest.Wait()
		bctx, cancel := context.WithCancel(ctx)
		b := troupetest.Go[int, int](bctx, s, 2)
		synctest.Wait()
		require.Equal(t, 1, stagekit.MailboxOf(s).Stats().Waiting)
		cancel()
		assert.ErrorIs(t, (<-b).Err, context.Canceled)
		synctest.Wait()
		assert.Equal(t, 0, stagekit.MailboxOf(s).Stats().Waiting, "it left the line")
		assert.Equal(t, 1, stagekit.MailboxOf(s).Stats().Used, "and took no slot")

		c := troupetest.Go[int, int](ctx, s, 3) // in line when the stage closes
		synctest.Wait()
		cctx, ccancel := context.WithCancel(ctx)
		ccancel()
		_ = s.Close(cctx)
		assert.ErrorIs(t, (<-c).Err, troupe.ErrClosed)
		assert.ErrorIs(t, (<-a).Err, troupe.ErrClosed, "the parked one too")
		assert.Zero(t, h.Calls())
		assert.Equal(t, 0, stagekit.MailboxOf(s).Stats().Used)
	})
}
