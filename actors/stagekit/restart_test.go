package stagekit_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors/stagekit"
	"github.com/troupe-go/troupe/troupetest"
)

// panicScene parks request 1, queues 2 and 3, arms a panic in the inner
// service's readiness, and lets 1 go: the stage takes 2, asks the inner
// service for readiness, and panics with 2 in hand.
func panicScene(t *testing.T, s *stagekit.Stage[int, int], h *troupetest.Handle[int, int]) (reqA *troupetest.Request[int, int], a, b, c <-chan troupetest.Result[int]) {
	ctx := context.Background()
	a = troupetest.Go(ctx, s, 1)
	synctest.Wait()
	b = troupetest.Go(ctx, s, 2)
	synctest.Wait()
	c = troupetest.Go(ctx, s, 3)
	synctest.Wait()
	require.Equal(t, 2, stagekit.MailboxOf(s).Stats().Queued)
	h.PanicOnReady("readiness exploded")
	h.Allow(1)
	reqA = h.Next(ctx)
	synctest.Wait()
	return reqA, a, b, c
}

// spec: SUP3
func TestSUP3_PanicRestartsStageAndAnswersWhatItHeld(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, s, h := overMock(t, 4)
		reqA, a, b, c := panicScene(t, s, h)

		rb := <-b
		assert.ErrorIs(t, rb.Err, troupe.ErrRestarted, "the request in hand gets an error that says so")
		var pe *troupe.PanicError
		require.ErrorAs(t, rb.Err, &pe)
		assert.Equal(t, "readiness exploded", pe.Value)

		// 1 had been handed on before the failure; 3 was queued and is
		// carried over to the restarted actor.
		reqA.Respond(10)
		assert.Equal(t, troupetest.Result[int]{Value: 10}, <-a)
		h.Allow(1)
		reqC := h.Next(context.Background())
		assert.Equal(t, 3, reqC.Value)
		reqC.Respond(30)
		assert.Equal(t, troupetest.Result[int]{Value: 30}, <-c)
		synctest.Wait()
		assert.Equal(t, 0, stagekit.MailboxOf(s).Stats().Used)
	})
}

// spec: SUP3, B4
func TestSUP3_StageStoppedByItsSupervisorClosesWithTheCause(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sys := troupetest.NewSystem(t).ActorsHost().System()
		host, err := sys.NewHost("strict", stagekit.Intensity(0, time.Minute))
		require.NoError(t, err)
		mock, h := troupetest.NewMock[int, int]()
		s := stage(t, host, mock, 4)
		reqA, a, b, c := panicScene(t, s, h)

		rb := <-b
		assert.ErrorIs(t, rb.Err, troupe.ErrRestarted, "the request in hand is answered when the panic is caught")
		assert.ErrorIs(t, rb.Err, troupe.ErrPanic)
		rc := <-c
		assert.ErrorIs(t, rc.Err, troupe.ErrClosed, "the queued request: the stage was stopped")
		assert.ErrorIs(t, rc.Err, troupe.ErrPanic, "closed, and the error says what killed it")
		_, err = s.Reserve(context.Background())
		assert.ErrorIs(t, err, troupe.ErrClosed)
		assert.ErrorIs(t, err, troupe.ErrPanic)
		reqA.Respond(10)
		assert.Equal(t, troupetest.Result[int]{Value: 10}, <-a, "what had left the stage is unaffected")
		assert.Equal(t, 0, stagekit.MailboxOf(s).Stats().Used)
	})
}

// delayed restarts a failed stage after a fixed delay.
type delayed time.Duration

func (d delayed) Decide(stagekit.Failure) stagekit.Decision {
	return stagekit.Decision{Directive: stagekit.Restart, Delay: time.Duration(d)}
}

// spec: HR3
func TestHR3_RequestHeldByAPanickingStageIsAnsweredBeforeTheRestartBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sys := troupetest.NewSystem(t).ActorsHost().System()
		host, err := sys.NewHost("slow-restarts", delayed(30*time.Second))
		require.NoError(t, err)
		mock, h := troupetest.NewMock[int, int]()
		s := stage(t, host, mock, 4)
		start := time.Now()
		reqA, a, b, c := panicScene(t, s, h)
		rb := <-b
		assert.Equal(t, time.Duration(0), time.Since(start), "answered when the panic was caught, not after the 30 s backoff")
		assert.ErrorIs(t, rb.Err, troupe.ErrRestarted)
		assert.ErrorIs(t, rb.Err, troupe.ErrPanic)
		reqA.Respond(10)
		assert.Equal(t, troupetest.Result[int]{Value: 10}, <-a)
		h.Allow(1)
		reqC := h.Next(context.Background())
		assert.Equal(t, 30*time.Second, time.Since(start), "the queued request waits for the restart")
		reqC.Respond(30)
		assert.Equal(t, troupetest.Result[int]{Value: 30}, <-c)
	})
}

// semService is a plain troupe.Service (no Inner side) whose Reserve
// blocks: a semaphore of one.
type semService struct {
	sem     chan struct{}
	inside  chan struct{}
	permits troupe.PermitSource[int, int]
}

func (s *semService) Reserve(ctx context.Context) (*troupe.Permit[int, int], error) {
	select {
	case s.sem <- struct{}{}:
		return s.permits.Issue(s), nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (s *semService) Call(_ context.Context, v int) (int, error) {
	defer func() { <-s.sem }()
	select {
	case s.inside <- struct{}{}:
	default:
		return 0, assert.AnError // two calls inside at once
	}
	defer func() { <-s.inside }()
	return v * 2, nil
}

func (s *semService) Release() { <-s.sem }

func TestAdaptedPlainServiceWaitsOffTheActor(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sys := troupetest.NewSystem(t)
		svc := &semService{sem: make(chan struct{}, 1), inside: make(chan struct{}, 1)}
		s := stage(t, sys, svc, 4)
		var outs []<-chan troupetest.Result[int]
		for i := range 20 {
			outs = append(outs, troupetest.Go(context.Background(), s, i))
		}
		for i, o := range outs {
			assert.Equal(t, troupetest.Result[int]{Value: i * 2}, <-o)
		}
		require.NoError(t, s.Close(context.Background()))
		assert.Empty(t, svc.sem, "every permit of the plain service was spent or released")
	})
}
