package stagekit_test

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors/stagekit"
	"github.com/troupe-go/troupe/troupetest"
)

// takenCounter is a pass-through behaviour that counts the requests its actor
// takes.
type takenCounter struct {
	stagekit.Passthrough[int, int]
	taken atomic.Int32
}

func (c *takenCounter) Request(s *stagekit.Stage[int, int], e *stagekit.Envelope[int, int]) {
	c.taken.Add(1)
	s.Forward(e)
}

// A stage that forwards every request as it is (Config.CallerPath) is
// crossed on the caller's goroutine while it is in its ordinary state: the
// request never enters its actor. When the inner service is not ready the
// request takes the actor's path (which parks it), and so do the requests
// behind it, in order, until it has gone.
//
// spec: PT1, ACT2, ACT3
func TestAStageInItsOrdinaryStateIsCrossedOnTheCallersGoroutine(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sys := troupetest.NewSystem(t)
		inner, err := stagekit.Spawn[int, int](sys, stagekit.Config{Name: "inner", Capacity: 1, HoldUntilOutcome: true, CallerPath: true},
			stagekit.Func(func(_ context.Context, v int) (int, error) { return v, nil }), &takenCounter{})
		require.NoError(t, err)
		beh := &takenCounter{}
		outer, err := stagekit.Spawn[int, int](sys, stagekit.Config{Name: "outer", CallerPath: true}, inner, beh)
		require.NoError(t, err)

		for i := range 3 {
			v, err := troupe.Do(context.Background(), outer, i)
			require.NoError(t, err)
			assert.Equal(t, i, v)
		}
		assert.Zero(t, beh.taken.Load(), "in its ordinary state the stage's actor takes no request")

		// The inner stage full: the next request waits, parked by the outer
		// stage's actor; the one after it is queued behind, in order.
		p, err := inner.Reserve(context.Background()) // take the inner stage's one slot
		require.NoError(t, err)
		var got [2]int
		done := make(chan struct{}, 2)
		for i := range 2 {
			go func() {
				v, err := troupe.Do(context.Background(), outer, 10+i)
				assert.NoError(t, err)
				got[i] = v
				done <- struct{}{}
			}()
			synctest.Wait()
		}
		assert.EqualValues(t, 1, beh.taken.Load(), "the first waits in the actor, the second behind it in the mailbox")
		require.NoError(t, p.Release())
		<-done
		<-done
		assert.Equal(t, [2]int{10, 11}, got)
		assert.EqualValues(t, 2, beh.taken.Load())

		v, err := troupe.Do(context.Background(), outer, 5)
		require.NoError(t, err)
		assert.Equal(t, 5, v)
		assert.EqualValues(t, 2, beh.taken.Load(), "back in its ordinary state: the caller's path again")
		require.NoError(t, outer.Close(context.Background()))
		require.NoError(t, inner.Close(context.Background()))
	})
}

// sessionStarter is a behaviour whose per-request work is its own
// (stagekit.CallerRequester): it counts where requests start, and stops
// admitting the caller's path while a control message says it is busy.
type sessionStarter struct {
	takenCounter
	onCaller atomic.Int32
	busy     bool           // actor
	decline  func(int) bool // set before the first request: the requests it leaves to the actor
}

func (b *sessionStarter) RequestOnCaller(s *stagekit.Stage[int, int], e *stagekit.Envelope[int, int]) bool {
	if b.decline != nil && b.decline(e.Req) {
		return false
	}
	b.onCaller.Add(1)
	stagekit.MailboxOf(s).Free()
	s.SendOnCaller(e)
	return true
}

func (b *sessionStarter) Ordinary() bool { return !b.busy }

func (b *sessionStarter) Control(_ *stagekit.Stage[int, int], msg any) {
	if v, ok := msg.(bool); ok {
		b.busy = v
	}
}

// A behaviour with work of its own per request (a retry's session) does it
// on the caller's goroutine while it says its state is ordinary, and its
// actor does it otherwise.
//
// spec: PT1
func TestABehaviourThatStartsItsOwnWorkDoesItOnTheCallerWhileOrdinary(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sys := troupetest.NewSystem(t)
		beh := &sessionStarter{}
		st, err := stagekit.Spawn[int, int](sys, stagekit.Config{Name: "sessions", CallerPath: true},
			stagekit.Func(func(_ context.Context, v int) (int, error) { return v, nil }), beh)
		require.NoError(t, err)
		call := func(v int) {
			t.Helper()
			got, err := troupe.Do(context.Background(), st, v)
			require.NoError(t, err)
			require.Equal(t, v, got)
		}
		call(1)
		call(2)
		assert.EqualValues(t, 2, beh.onCaller.Load())
		assert.Zero(t, beh.taken.Load())

		st.PostControl(true)
		synctest.Wait()
		call(3)
		assert.EqualValues(t, 2, beh.onCaller.Load(), "not ordinary: the actor's path")
		assert.EqualValues(t, 1, beh.taken.Load())

		st.PostControl(false)
		synctest.Wait()
		call(4)
		assert.EqualValues(t, 3, beh.onCaller.Load(), "ordinary again")
		require.NoError(t, st.Close(context.Background()))
	})
}

// A behaviour whose admission is decided with its request's work (an
// adaptive limit's gate) declines on the caller what it does not admit
// there: the request takes the actor's path, its inner unit given back,
// and has its outcome as any other.
//
// spec: PT1
func TestARequestTheCallersPathDeclinesTakesTheActorsPath(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sys := troupetest.NewSystem(t)
		inner, err := stagekit.Spawn[int, int](sys, stagekit.Config{Name: "inner", Capacity: 1, HoldUntilOutcome: true, CallerPath: true},
			stagekit.Func(func(_ context.Context, v int) (int, error) { return v, nil }), &takenCounter{})
		require.NoError(t, err)
		beh := &sessionStarter{decline: func(v int) bool { return v%2 == 1 }}
		st, err := stagekit.Spawn[int, int](sys, stagekit.Config{Name: "sessions", CallerPath: true}, inner, beh)
		require.NoError(t, err)
		for v := range 4 {
			got, err := troupe.Do(context.Background(), st, v)
			require.NoError(t, err)
			require.Equal(t, v, got)
		}
		assert.EqualValues(t, 2, beh.onCaller.Load(), "0 and 2 on the caller")
		assert.EqualValues(t, 2, beh.taken.Load(), "1 and 3 on the actor")
		synctest.Wait()
		assert.Zero(t, stagekit.MailboxOf(inner).Stats().Used, "the units reserved for the declined requests came back")
		require.NoError(t, st.Close(context.Background()))
		require.NoError(t, inner.Close(context.Background()))
	})
}
