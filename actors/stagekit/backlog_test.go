package stagekit_test

import (
	"context"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe/actors/stagekit"
	"github.com/troupe-go/troupe/troupetest"
)

// batch keeps requests until told to release them, then forwards them all
// at once: a rate limiter opening a window, filter checks finishing.
type batch struct {
	stagekit.Passthrough[int, int]
	kept []*stagekit.Envelope[int, int]
}

type release struct{}

func (b *batch) Request(_ *stagekit.Stage[int, int], e *stagekit.Envelope[int, int]) {
	b.kept = append(b.kept, e)
}

func (b *batch) Control(s *stagekit.Stage[int, int], msg any) {
	if _, ok := msg.(release); ok {
		for _, e := range b.kept {
			s.Forward(e)
		}
		b.kept = nil
	}
}

func (b *batch) Idle() bool { return len(b.kept) == 0 }

// spec: ACT2, ACT3
func TestACT3_RequestsForwardedWhileParkedWaitInOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mock, h := troupetest.NewMock[int, int]()
		s, err := stagekit.Spawn[int, int](troupetest.NewSystem(t), stagekit.Config{Name: "batch", Capacity: 8}, mock, &batch{})
		require.NoError(t, err)
		ctx := context.Background()
		var outs []<-chan troupetest.Result[int]
		for i := range 4 {
			outs = append(outs, troupetest.Go[int, int](ctx, s, i))
			synctest.Wait()
		}
		s.PostControl(release{})
		synctest.Wait()
		assert.Equal(t, 1, h.Waiting(), "the first waits for the inner service, the others behind it")
		assert.Equal(t, 4, stagekit.MailboxOf(s).Stats().Used, "each keeps its slot")
		for i := range 4 {
			h.Allow(1)
			req := h.Next(ctx)
			assert.Equal(t, i, req.Value, "in the order they were forwarded")
			req.Respond(i * 10)
			assert.Equal(t, i*10, (<-outs[i]).Value)
		}
		synctest.Wait()
		assert.Equal(t, 0, stagekit.MailboxOf(s).Stats().Used)
	})
}

// spec: ACT5
func TestACT5_CloseAnswersTheRequestsBehindTheParkedOne(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mock, _ := troupetest.NewMock[int, int]()
		s, err := stagekit.Spawn[int, int](troupetest.NewSystem(t), stagekit.Config{Name: "batch", Capacity: 8}, mock, &batch{})
		require.NoError(t, err)
		ctx := context.Background()
		var outs []<-chan troupetest.Result[int]
		for i := range 3 {
			outs = append(outs, troupetest.Go[int, int](ctx, s, i))
		}
		synctest.Wait()
		s.PostControl(release{})
		synctest.Wait()
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		assert.ErrorIs(t, s.Close(cctx), context.Canceled)
		for _, o := range outs {
			assert.Error(t, (<-o).Err)
		}
		assert.Equal(t, 0, stagekit.MailboxOf(s).Stats().Used)
	})
}
