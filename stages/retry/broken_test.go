package retry_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
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
