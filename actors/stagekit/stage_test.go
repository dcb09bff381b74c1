package stagekit_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors/stagekit"
	"github.com/troupe-go/troupe/internal/rt"
	"github.com/troupe-go/troupe/troupetest"
)

// spec: ACT1
func TestACT1_StageIsASupervisedActorWithABoundedMailbox(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sys, s, _ := overMock(t, 3)
		proc, ok := rt.ActorSystem(sys).ProcessRegistry.Get(stagekit.PIDOf(s))
		require.True(t, ok)
		assert.IsType(t, &actor.ActorProcess{}, proc, "a protoactor-go actor")
		assert.True(t, strings.HasPrefix(stagekit.PIDOf(s).Id, stagekit.SupervisorPID(sys.Host()).Id+"/"), "a child of its host's supervisor actor")

		var held []*troupe.Permit[int, int]
		for range 3 {
			p, err := s.Reserve(context.Background())
			require.NoError(t, err)
			held = append(held, p)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_, err := s.Reserve(ctx)
		assert.ErrorIs(t, err, context.DeadlineExceeded, "the fourth reservation waits: the mailbox is bounded")
		assert.Equal(t, 3, stagekit.MailboxOf(s).Stats().Capacity)
		for _, p := range held {
			require.NoError(t, p.Release())
		}
	})
}

// spec: ACT2, ACT3
func TestACT2_ACT3_SlotHeldWhileQueuedOrParked(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, s, h := overMock(t, 2)
		ctx := context.Background()
		a := troupetest.Go(ctx, s, 1)
		synctest.Wait()
		st := stagekit.MailboxOf(s).Stats()
		assert.Equal(t, 1, st.Used, "parked request keeps its slot")
		assert.Equal(t, 0, st.Queued)
		assert.Equal(t, 1, h.Waiting(), "the stage waits for the inner service's readiness")

		b := troupetest.Go(ctx, s, 2)
		synctest.Wait()
		st = stagekit.MailboxOf(s).Stats()
		assert.Equal(t, 2, st.Used)
		assert.Equal(t, 1, st.Queued, "a stage whose inner is not ready takes no further work")

		c := troupetest.Go(ctx, s, 3)
		synctest.Wait()
		assert.Equal(t, 1, stagekit.MailboxOf(s).Stats().Waiting, "then callers wait in their reservations")

		h.Allow(1) // the parked request goes; its slot goes to the waiting caller
		reqA := h.Next(ctx)
		assert.Equal(t, 1, reqA.Value)
		synctest.Wait()
		st = stagekit.MailboxOf(s).Stats()
		assert.Equal(t, 2, st.Used)
		assert.Equal(t, 1, st.Queued, "3 is queued behind 2, which is parked")
		assert.Equal(t, 0, st.Waiting)

		h.Allow(2)
		reqB, reqC := h.Next(ctx), h.Next(ctx)
		if reqB.Value == 3 { // each caller's goroutine runs its own call: either may arrive first
			reqB, reqC = reqC, reqB
		}
		assert.Equal(t, []int{2, 3}, []int{reqB.Value, reqC.Value})
		synctest.Wait()
		assert.Equal(t, 0, stagekit.MailboxOf(s).Stats().Used, "handed on: every slot is free")
		reqA.Respond(10)
		reqB.Respond(20)
		reqC.Fail(errors.New("no"))
		assert.Equal(t, troupetest.Result[int]{Value: 10}, <-a)
		assert.Equal(t, troupetest.Result[int]{Value: 20}, <-b)
		assert.EqualError(t, (<-c).Err, "no")
	})
}

// spec: ACT4
func TestACT4_ResponsesAndCancellationsFlowWhileParked(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, s, h := overMock(t, 2)
		ctx := context.Background()
		h.Allow(1)
		a := troupetest.Go(ctx, s, 1)
		reqA := h.Next(ctx)
		bctx, cancelB := context.WithCancel(ctx)
		b := troupetest.Go(bctx, s, 2)
		synctest.Wait()
		require.Equal(t, 1, h.Waiting(), "2 is parked: the request path is blocked")

		reqA.Respond(11)
		assert.Equal(t, troupetest.Result[int]{Value: 11}, <-a, "the response to 1 is delivered all the same")

		cancelB()
		assert.ErrorIs(t, (<-b).Err, context.Canceled, "the parked caller gives up at once")
		synctest.Wait()
		assert.Equal(t, 0, stagekit.MailboxOf(s).Stats().Used, "the stage answered the parked request and freed its slot")
		assert.Equal(t, 0, h.Waiting(), "and withdrew its wait for the inner service")
		h.Allow(1)
		synctest.Wait()
		assert.Equal(t, 1, h.Allowed(), "so the inner's next unit is not spent on the abandoned request")
	})
}

// spec: ACT5, CORE6
func TestACT5_CloseFailsWhatCannotDrainAndReturnsEverySlot(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, s, h := overMock(t, 4)
		ctx := context.Background()
		var calls []<-chan troupetest.Result[int]
		for i := range 4 {
			calls = append(calls, troupetest.Go(ctx, s, i)) // 1 parked, 3 queued
			synctest.Wait()
		}
		waiting := make(chan error, 1)
		go func() { _, err := s.Reserve(ctx); waiting <- err }()
		synctest.Wait()
		require.Equal(t, 1, stagekit.MailboxOf(s).Stats().Waiting)

		cctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		start := time.Now()
		err := s.Close(cctx) // the inner never gets ready: nothing can drain
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		assert.Equal(t, time.Second, time.Since(start), "Close waited for the drain until its context ended")
		assert.ErrorIs(t, <-waiting, troupe.ErrClosed, "a waiting reservation is told")
		for _, c := range calls {
			assert.ErrorIs(t, (<-c).Err, troupe.ErrClosed)
		}
		assert.Equal(t, 0, stagekit.MailboxOf(s).Stats().Used)
		_, err = s.Reserve(ctx)
		assert.ErrorIs(t, err, troupe.ErrClosed)
		assert.Equal(t, 0, h.Waiting(), "the wait on the inner service was withdrawn")
		assert.NoError(t, s.Close(ctx), "closing again is harmless")
	})
}

// spec: ACT5
func TestACT5_CloseDrainsAcceptedRequests(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, s, h := overMock(t, 4)
		ctx := context.Background()
		p, err := s.Reserve(ctx)
		require.NoError(t, err)
		var calls []<-chan troupetest.Result[int]
		for i := range 3 {
			calls = append(calls, troupetest.Go(ctx, s, i))
			synctest.Wait()
		}
		closed := make(chan error, 1)
		go func() { closed <- s.Close(ctx) }()
		synctest.Wait()
		_, err = p.Call(ctx, 9)
		assert.ErrorIs(t, err, troupe.ErrClosed, "a permit issued before the close cannot call after it")
		h.Allow(3)
		for range 3 {
			req := h.Next(ctx)
			req.Respond(req.Value * 10)
		}
		for i, c := range calls {
			assert.Equal(t, troupetest.Result[int]{Value: i * 10}, <-c, "accepted before the close: drained, not failed")
		}
		assert.NoError(t, <-closed)
		assert.Equal(t, 0, stagekit.MailboxOf(s).Stats().Used)
	})
}

// spec: CORE7
func TestCORE7_InnerReadinessErrorBreaksTheStage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, s, h := overMock(t, 4)
		ctx := context.Background()
		boom := errors.New("connection refused")
		h.Break(boom)
		r := <-troupetest.Go(ctx, s, 1)
		assert.ErrorIs(t, r.Err, troupe.ErrClosed)
		assert.ErrorIs(t, r.Err, boom, "the error says what broke it")
		synctest.Wait()
		_, err := s.Reserve(ctx)
		assert.ErrorIs(t, err, boom, "callers above stop using it")
		assert.Zero(t, h.Calls())
	})
}

// spec: CORE6
func TestCORE6_CallerGivingUpGetsOneOutcome(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, s, h := overMock(t, 2)
		ctx := context.Background()
		h.Allow(1)
		actx, cancelA := context.WithCancel(ctx)
		a := troupetest.Go(actx, s, 1)
		req := h.Next(ctx)
		cancelA()
		assert.ErrorIs(t, (<-a).Err, context.Canceled, "given up while the downstream works on it")
		assert.ErrorIs(t, req.Ctx.Err(), context.Canceled, "the downstream's context is cancelled too")
		req.Respond(5) // too late: nobody is listening, nothing breaks

		dctx, cancelD := context.WithTimeout(ctx, time.Second)
		defer cancelD()
		r := <-troupetest.Go(dctx, s, 2) // parks: no capacity left in the mock
		assert.ErrorIs(t, r.Err, context.DeadlineExceeded)
		synctest.Wait()
		assert.Equal(t, 0, stagekit.MailboxOf(s).Stats().Used)
	})
}

func TestFuncPanicBecomesAnError(t *testing.T) {
	sys := troupetest.NewSystem(t)
	f := stagekit.Func(func(context.Context, int) (int, error) { panic("downstream exploded") }, "api")
	s := stage(t, sys, f, 1)
	_, err := troupe.Do[int, int](context.Background(), s, 1)
	var pe *troupe.PanicError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "api", pe.Where)
	assert.Equal(t, "downstream exploded", pe.Value)
	assert.NotEmpty(t, pe.Stack)
	v, err := troupe.Do[int, int](context.Background(), s, 2)
	assert.ErrorIs(t, err, troupe.ErrPanic, "the stage still works")
	assert.Zero(t, v)

	_, err = stagekit.Func[int, int](nil).Reserve(context.Background())
	assert.ErrorIs(t, err, stagekit.ErrNilFunc)
}

func TestSpawnRejectsBadConfig(t *testing.T) {
	sys := troupetest.NewSystem(t)
	f := stagekit.Func(func(_ context.Context, v int) (int, error) { return v, nil })
	_, err := stagekit.Spawn(sys, stagekit.Config{Capacity: -1}, f, stagekit.Passthrough[int, int]{})
	assert.ErrorIs(t, err, troupe.ErrBadConfig)
	_, err = stagekit.Spawn[int, int](sys, stagekit.Config{}, nil, stagekit.Passthrough[int, int]{})
	assert.ErrorIs(t, err, troupe.ErrBadConfig)
	_, err = stagekit.Spawn(otherHost{}, stagekit.Config{}, f, stagekit.Passthrough[int, int]{})
	assert.Error(t, err)
	mock, _ := troupetest.NewMock[int, int]()
	_, err = stagekit.Spawn(sys, stagekit.Config{}, troupe.Service[int, int](mock), nil)
	assert.ErrorIs(t, err, troupe.ErrBadConfig)
}

type otherHost struct{}

func (otherHost) TroupeHost() {}
