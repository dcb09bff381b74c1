package hedge

import (
	"context"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
)

// A winner's context released before anyone watched it takes no lock and
// links nothing: a watcher that comes after it, or at the same time, is
// left with no registration on the request's context, follows the request
// through the request itself, and the stage's cancel no longer counts.
//
// spec: H1
func TestH1_AReleasedAttemptContextLeavesNoLinkBehind(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		parent, cancelParent := context.WithCancel(context.Background())
		late := newAttemptCtx(parent)
		late.release()
		ran := make(chan struct{})
		stop := context.AfterFunc(late, func() { close(ran) })
		defer stop()
		late.cancel(context.Canceled)
		assert.NoError(t, late.Err(), "released: the stage's cancel does not count")

		racing := make([]*attemptCtx, 50)
		for i := range racing {
			c := newAttemptCtx(parent)
			racing[i] = c
			watched := make(chan struct{})
			go func() {
				c.Done()
				close(watched)
			}()
			c.release()
			<-watched
			c.cancel(context.Canceled)
			assert.NoError(t, c.Err())
			c.mu.Lock()
			assert.Nil(t, c.link, "whichever came first, nothing stays linked to the request's context")
			c.mu.Unlock()
		}
		cancelParent()
		synctest.Wait()
		<-ran
		for _, c := range racing {
			assert.ErrorIs(t, c.Err(), context.Canceled, "Err follows the request's context")
		}
	})
}
