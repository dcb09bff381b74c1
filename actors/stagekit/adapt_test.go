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

// lateCancel is a service whose Reserve, once its context ends, returns
// only when late is closed: a cancelled background wait that ends after
// the next one started.
type lateCancel struct {
	*troupetest.Mock[int, int]
	late chan struct{}
}

func (s lateCancel) Reserve(ctx context.Context) (*troupe.Permit[int, int], error) {
	p, err := s.Mock.Reserve(ctx)
	if err != nil && ctx.Err() != nil {
		<-s.late
	}
	return p, err
}

// Regression: Adapt knew its background waits by the stage's Waiter, which
// a stage reuses. A wait cancelled (its request's context ended) whose
// Reserve returned after the stage started the next wait took that wait
// for its own: it notified the Waiter with context.Canceled, a readiness
// error that closed the stage for good.
//
// spec: HR3, CORE7
func TestHR3_ACancelledAdaptedWaitThatEndsLateLeavesTheNextWaitAlone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mock, h := troupetest.NewMock[int, int]()
		svc := lateCancel{Mock: mock, late: make(chan struct{})}
		in := stagekit.Adapt[int, int](svc)
		notes := make(chan error, 4)
		w := stagekit.NewWaiter(func(err error) { notes <- err })

		granted, err := in.ReserveAsync(w)
		require.NoError(t, err)
		require.False(t, granted)
		require.True(t, in.CancelWait(w), "the first wait is cancelled")
		synctest.Wait() // its Reserve has seen the cancel and waits for late
		granted, err = in.ReserveAsync(w)
		require.NoError(t, err)
		require.False(t, granted, "the second wait runs")

		close(svc.late)
		synctest.Wait()
		select {
		case err := <-notes:
			t.Fatalf("the cancelled wait notified the second one: %v", err)
		default:
		}

		h.Allow(1)
		synctest.Wait()
		select {
		case err := <-notes:
			assert.NoError(t, err, "the second wait is granted")
		default:
			t.Fatal("the second wait was never granted")
		}
		in.Unreserve()
	})
}
