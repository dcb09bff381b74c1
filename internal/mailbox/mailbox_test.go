package mailbox_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe/internal/mailbox"
)

// spec: ACT1, ACT2
func TestACT2_ReservationsBoundTheMailbox(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := newFake(2, false)
		mb := a.mb
		ok, err := mb.TryReserve()
		require.True(t, ok)
		require.NoError(t, err)
		require.NoError(t, mb.Reserve(context.Background()))
		ok, _ = mb.TryReserve()
		assert.False(t, ok, "both slots are reserved")

		// A slot stays taken while queued and while the actor holds it.
		require.NoError(t, mb.Post(1))
		synctest.Wait()
		assert.Equal(t, 1, a.heldCount())
		assert.Equal(t, 2, mb.Stats().Used)

		// A waiter gets the slot the actor frees.
		got := make(chan error, 1)
		go func() { got <- mb.Reserve(context.Background()) }()
		synctest.Wait()
		assert.Equal(t, 1, mb.Stats().Waiting)
		a.freeHeld(1)
		require.NoError(t, <-got)
		assert.Equal(t, 2, mb.Stats().Used)

		mb.Free()
		mb.Free()
		assert.Equal(t, 0, mb.Stats().Used)
		mb.PostControl(stopMsg{})
		synctest.Wait()
	})
}

func TestFirstComeFirstServed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := newFake(1, false)
		mb := a.mb
		require.NoError(t, mb.Reserve(context.Background()))
		order := make(chan int, 3)
		for i := range 3 {
			go func() {
				if mb.Reserve(context.Background()) == nil {
					order <- i
					mb.Free()
				}
			}()
			synctest.Wait() // line up in order
		}
		mb.Free()
		synctest.Wait()
		assert.Equal(t, []int{0, 1, 2}, []int{<-order, <-order, <-order})
		mb.PostControl(stopMsg{})
		synctest.Wait()
	})
}

func TestReserveAsyncAndCancelWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := newFake(1, false)
		mb := a.mb
		require.NoError(t, mb.Reserve(context.Background()))
		got := make(chan error, 2)
		w := mailbox.NewWaiter(func(err error) { got <- err })
		granted, err := mb.ReserveAsync(w)
		require.NoError(t, err)
		require.False(t, granted)
		assert.True(t, mb.CancelWait(w))
		assert.False(t, mb.CancelWait(w), "not in line any more")

		granted, err = mb.ReserveAsync(w)
		require.NoError(t, err)
		require.False(t, granted)
		_, err = mb.ReserveAsync(w)
		assert.Error(t, err, "a waiter is in one line at a time")
		mb.Free()
		require.NoError(t, <-got, "the freed slot went to the waiter")
		assert.Equal(t, 1, mb.Stats().Used)
		assert.False(t, mb.CancelWait(w), "already granted")
		mb.Free()
		mb.PostControl(stopMsg{})
		synctest.Wait()
	})
}

func TestAdmissionPauseHoldsReservations(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := newFake(4, true)
		mb := a.mb
		mb.SetAdmission(false)
		ok, _ := mb.TryReserve()
		assert.False(t, ok, "paused admission refuses even with free slots")
		got := make(chan error, 1)
		go func() { got <- mb.Reserve(context.Background()) }()
		synctest.Wait()
		assert.Equal(t, 1, mb.Stats().Waiting)
		mb.SetAdmission(true)
		require.NoError(t, <-got)
		mb.Free()
		mb.PostControl(stopMsg{})
		synctest.Wait()
	})
}

func TestCloseFailsWaitersAndLaterReservations(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := newFake(1, false)
		mb := a.mb
		require.NoError(t, mb.Reserve(context.Background()))
		boom := errors.New("closed for a reason")
		got := make(chan error, 1)
		go func() { got <- mb.Reserve(context.Background()) }()
		synctest.Wait()
		mb.Close(boom)
		assert.ErrorIs(t, <-got, boom)
		_, err := mb.TryReserve()
		assert.ErrorIs(t, err, boom)
		assert.ErrorIs(t, mb.Reserve(context.Background()), boom)
		mb.Close(errors.New("second close is ignored"))
		assert.ErrorIs(t, mb.Reserve(context.Background()), boom)
		assert.True(t, mb.Closed())

		// A slot reserved before the close can still be used.
		require.NoError(t, mb.Post(1))
		synctest.Wait()
		assert.Equal(t, 1, a.freeHeld(1))
		mb.PostControl(stopMsg{})
		synctest.Wait()
		assert.Equal(t, 0, mb.Stats().Used)
	})
}

// spec: ACT2
func TestACT2_StopDropsQueuedAndRefusesLaterPosts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var dropped []any
		a := newFake(4, false)
		mb, err := mailbox.New(4, mailbox.OnDropped(func(msg any, err error) {
			dropped = append(dropped, msg)
			if _, ok := msg.(int); ok {
				a.mb.Free()
			}
			assert.ErrorIs(t, err, mailbox.ErrStopped)
		}))
		require.NoError(t, err)
		a.mb = mb
		mb.RegisterHandlers(a, nil)

		for range 3 {
			require.NoError(t, mb.Reserve(context.Background()))
		}
		mb.SetUserPaused(true) // stands in for an actor that is waiting for its inner service
		require.NoError(t, mb.Post(1))
		require.NoError(t, mb.Post(2))
		mb.PostControl(stopMsg{})
		synctest.Wait()
		assert.Equal(t, []any{1, 2}, dropped, "queued user messages are answered, not lost")
		assert.ErrorIs(t, mb.Post(3), mailbox.ErrStopped, "a post after stop is refused")
		mb.PostControl("late")
		assert.Equal(t, []any{1, 2, "late"}, dropped)
		assert.Equal(t, 0, mb.Stats().Used, "every slot came back")
	})
}

// spec: ACT4
func TestACT4_SystemAndControlMessagesPassPausedUserMessages(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := newFake(1, false)
		mb := a.mb
		require.NoError(t, mb.Reserve(context.Background()))
		mb.SetUserPaused(true)
		require.NoError(t, mb.Post(1))
		mb.PostControl("grant")
		mb.PostSystemMessage(&actor.Started{})
		synctest.Wait()
		a.mu.Lock()
		assert.Equal(t, []any{"grant"}, a.control)
		assert.Len(t, a.system, 1)
		assert.Empty(t, a.held, "user messages wait while paused")
		a.mu.Unlock()
		assert.Equal(t, 1, mb.Stats().Queued)
		assert.Equal(t, 1, mb.UserMessageCount())

		// Suspension (protoactor's, on failure) holds control messages too.
		mb.PostSystemMessage(&actor.SuspendMailbox{})
		mb.PostControl("held back")
		synctest.Wait()
		a.mu.Lock()
		assert.Equal(t, []any{"grant"}, a.control)
		a.mu.Unlock()
		mb.PostSystemMessage(&actor.ResumeMailbox{})
		synctest.Wait()
		a.mu.Lock()
		assert.Equal(t, []any{"grant", "held back"}, a.control)
		a.mu.Unlock()
		mb.PostControl(stopMsg{})
		synctest.Wait()
	})
}

func TestPanicIsReportedAndEscalated(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var got []any
		mb, err := mailbox.New(1, mailbox.OnPanic(func(msg, reason any) { got = append(got, msg, reason) }))
		require.NoError(t, err)
		inv := &panicker{mb: mb}
		mb.RegisterHandlers(inv, nil)
		require.NoError(t, mb.Reserve(context.Background()))
		require.NoError(t, mb.Post("boom"))
		synctest.Wait()
		assert.Equal(t, []any{"boom", "kaboom"}, got)
		assert.Equal(t, []any{"kaboom", mb}, inv.escalated, "escalated with the mailbox, for the supervisor to act through")
		mb.Free()
		mb.PostControl(stopMsg{})
		synctest.Wait()
	})
}

type panicker struct {
	mb        *mailbox.Mailbox
	escalated []any
}

func (p *panicker) InvokeSystemMessage(any) {}
func (p *panicker) InvokeUserMessage(msg any) {
	if _, ok := msg.(stopMsg); ok {
		p.mb.Stop()
		return
	}
	panic("kaboom")
}
func (p *panicker) EscalateFailure(reason, msg any) { p.escalated = append(p.escalated, reason, msg) }
