package retry_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors/stagekit"
	"github.com/troupe-go/troupe/stages/retry"
	"github.com/troupe-go/troupe/troupetest"
)

// Regression: a session whose inner service broke while it waited to retry
// was answered before the stage closed, so its caller, reserving again at
// once, could be admitted by a stage that was about to close for good. The
// window is a few instructions wide: the test tries it many times (the
// bubble fakes time only: the caller and the actor still run at once).
//
// spec: CORE7, RT9
func TestCORE7_ACallerWhoHeardTheInnerServiceBreakIsRefusedAtOnce(t *testing.T) {
	rounds := 2000
	if testing.Short() {
		rounds = 200
	}
	synctest.Test(t, func(t *testing.T) {
		sys := troupetest.NewSystem(t)
		ctx := context.Background()
		broke := errors.New("inner broken")
		policy := retry.Attempts[int, int]{Max: 1, Retryable: func(int, error) bool { return true }}
		for i := range rounds {
			mock, h := troupetest.NewMock[int, int]()
			svc, err := retry.New(sys, mock, policy)
			require.NoError(t, err)
			h.Allow(1)
			type result struct{ call, again error }
			fut := make(chan result, 1)
			go func() { // reserves again the moment it hears
				_, err := troupe.Do(ctx, svc, i)
				_, again := svc.Reserve(ctx)
				fut <- result{err, again}
			}()
			h.Next(ctx).Fail(errors.New("boom"))
			synctest.Wait()
			require.Equal(t, 1, h.Waiting(), "the session waits for the inner service to retry")
			h.Break(broke)
			r := <-fut
			require.ErrorIs(t, r.call, broke, "round %d: the session gets the readiness error itself", i)
			if !assert.ErrorIs(t, r.again, troupe.ErrClosed, "round %d: the stage is closed before the caller hears", i) {
				return
			}
		}
	})
}

// Regression: a stage stopped while the inner service's grant of a unit was
// on its way to it dropped the grant, and the unit was lost for good (a
// limit below it held a slot nobody would free). The inner service here
// grants the waiting unit just as the stopping stage takes its wait back,
// so the grant is always on its way when the stage stops.
//
// spec: HR2, RT3
func TestHR2_AUnitGrantedToAStageThatStopsIsGivenBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sys := troupetest.NewSystem(t)
		ctx := context.Background()
		mock, h := troupetest.NewMock[int, int]()
		late := &grantsLate{Mock: mock, grant: func() { h.Allow(1) }}
		policy := retry.Attempts[int, int]{Max: 1, Retryable: func(int, error) bool { return true }}
		svc, err := retry.New(sys, late, policy)
		require.NoError(t, err)
		h.Allow(1)
		fut := troupetest.Go(ctx, svc, 1)
		h.Next(ctx).Fail(errors.New("boom"))
		synctest.Wait()
		require.Equal(t, 1, h.Waiting(), "the session waits for the inner service to retry")
		late.armed.Store(true)
		done, cancel := context.WithCancel(ctx)
		cancel()
		_ = svc.Close(done) // stops at once: the session's wait is taken back
		assert.ErrorIs(t, (<-fut).Err, troupe.ErrClosed)
		synctest.Wait()
		assert.False(t, late.armed.Load(), "the unit was granted as the wait was taken back")
		assert.Equal(t, int64(1), h.Calls(), "the retry never reached the mock")
		assert.Equal(t, 1, h.Allowed(), "the unit granted too late came back")
	})
}

// grantsLate is a mock whose Inner side, once armed, grants the unit its
// line's first waiter waits for right as the stage takes that wait back.
type grantsLate struct {
	*troupetest.Mock[int, int]
	grant func()
	armed atomic.Bool
}

func (g *grantsLate) ActorsInner() stagekit.Inner[int, int] {
	return lateInner{g.Mock.ActorsInner(), g}
}

type lateInner struct {
	stagekit.Inner[int, int]
	g *grantsLate
}

func (l lateInner) CancelWait(w *stagekit.Waiter) bool {
	if l.g.armed.CompareAndSwap(true, false) {
		l.g.grant()
	}
	return l.Inner.CancelWait(w)
}
