package mailbox_test

import (
	"context"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe/internal/mailbox"
)

// funcActor is a MessageInvoker that hands user messages to a function.
type funcActor struct{ user func(msg any) }

func (a funcActor) InvokeSystemMessage(any)   {}
func (a funcActor) InvokeUserMessage(msg any) { a.user(msg) }
func (a funcActor) EscalateFailure(any, any)  {}

func newFunc(t *testing.T, size int, user func(msg any), opts ...mailbox.Option) *mailbox.Mailbox {
	t.Helper()
	mb, err := mailbox.New(size, append([]mailbox.Option{mailbox.Inline(32)}, opts...)...)
	require.NoError(t, err)
	mb.RegisterHandlers(funcActor{user}, nil)
	return mb
}

// An idle inline actor runs a posted message on the poster's goroutine,
// before Post returns; a paused one queues it, and runs it once resumed.
// spec: ACT1, ACT3
func TestACT1_InlinePostRunsAnIdleActorAtOnce(t *testing.T) {
	var got []any
	var mb *mailbox.Mailbox
	mb = newFunc(t, 2, func(msg any) {
		switch msg {
		case "pause":
			mb.SetUserPaused(true)
		case "resume":
			mb.SetUserPaused(false)
		default:
			got = append(got, msg)
			mb.Free()
		}
	})
	require.NoError(t, mb.Reserve(context.Background()))
	require.NoError(t, mb.Post(1))
	assert.Equal(t, []any{1}, got, "the poster ran the idle actor")

	mb.PostControl("pause")
	require.NoError(t, mb.Reserve(context.Background()))
	require.NoError(t, mb.Post(2))
	assert.Equal(t, []any{1}, got, "a paused actor takes no user message")
	assert.Equal(t, 1, mb.Stats().Queued)
	mb.PostControl("resume")
	assert.Equal(t, []any{1, 2}, got)
	assert.Equal(t, 0, mb.Stats().Used)
}

// relay is actor a forwarding each number it takes to actor b with PostFrom;
// b records what it receives. a pauses and resumes its user messages on
// "pause" and "resume", and stops on stopMsg.
type relay struct {
	a, b *mailbox.Mailbox
	into []any   // what b received, in order
	seen [][]any // what b had received when a posted each message
}

func newRelay(t *testing.T, aOpts ...mailbox.Option) *relay {
	r := &relay{}
	r.b = newFunc(t, 4, func(msg any) {
		r.into = append(r.into, msg)
		r.b.Free()
	})
	r.a = newFunc(t, 4, func(msg any) {
		switch msg {
		case "pause":
			r.a.SetUserPaused(true)
			return
		case "resume":
			r.a.SetUserPaused(false)
			return
		case stopMsg{}:
			r.a.Stop() // its goroutine, if it has one, exits
			return
		}
		ok, err := r.b.TryReserve()
		require.NoError(t, err)
		require.True(t, ok)
		require.NoError(t, r.b.PostFrom(r.a, msg))
		r.seen = append(r.seen, append([]any(nil), r.into...))
		r.a.Free()
	}, aOpts...)
	return r
}

// queue pauses a and queues 1, 2 and 3 in it.
func (r *relay) queue(t *testing.T) {
	r.a.PostControl("pause")
	for i := 1; i <= 3; i++ {
		require.NoError(t, r.a.Reserve(context.Background()))
		require.NoError(t, r.a.Post(i))
	}
}

// PostFrom from a busy actor (more messages queued behind the one it
// processes) queues the message and runs the target only once the poster's
// actor is handed back; from an actor with nothing waiting it runs the target
// at once, nested. Either way the target sees the messages in the order they
// were posted.
func TestPostFromRunsTheTargetAfterABusyPosterAndKeepsOrder(t *testing.T) {
	r := newRelay(t)
	r.queue(t)
	assert.Equal(t, 3, r.a.Stats().Queued)
	r.a.PostControl("resume")

	assert.Equal(t, []any{1, 2, 3}, r.into, "b got every message, in order")
	assert.Equal(t, [][]any{
		nil,       // 1: 2 and 3 wait behind it in a: b runs after a is handed back
		{1},       // 2: 3 waits behind it
		{1, 2, 3}, // 3: nothing waits in a: b ran nested, before PostFrom returned
	}, r.seen)
	assert.Equal(t, 0, r.a.Stats().Used)
	assert.Equal(t, 0, r.b.Stats().Used)
}

// An actor run by its own goroutine (no inline dispatch) that posts with
// PostFrom while busy runs the target after each message, on that goroutine:
// nothing it posted is left unrun, and the order holds.
func TestPostFromAnActorOnItsOwnGoroutine(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRelay(t, mailbox.Inline(0))
		r.queue(t)
		synctest.Wait()
		assert.Equal(t, 3, r.a.Stats().Queued)
		r.a.PostControl("resume")
		synctest.Wait()
		assert.Equal(t, []any{1, 2, 3}, r.into)
		assert.Equal(t, 0, r.a.Stats().Used)
		assert.Equal(t, 0, r.b.Stats().Used)
		r.a.PostControl(stopMsg{})
		synctest.Wait()
	})
}
