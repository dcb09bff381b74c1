package hedge

import (
	"context"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
)

// A winner's context settled while a watcher asks for Done at the same
// time: whichever comes first, the stage's cancel no longer counts and the
// watcher's channel closes with the request's context.
//
// spec: H1, EG13
func TestASettledAttemptContextFollowsOnlyItsRequest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		parent, cancelParent := context.WithCancel(context.Background())
		racing := make([]*attemptCtx, 50)
		dones := make([]<-chan struct{}, len(racing))
		for i := range racing {
			c := newAttemptCtx(parent)
			racing[i] = c
			watched := make(chan struct{})
			go func() {
				dones[i] = c.Done()
				close(watched)
			}()
			c.Settle()
			<-watched
			c.lost()
			assert.NoError(t, c.Err())
		}
		cancelParent()
		synctest.Wait()
		for i, c := range racing {
			<-dones[i]
			assert.ErrorIs(t, c.Err(), context.Canceled, "Err follows the request's context")
		}
	})
}
