package timeout_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/stages/limit"
	"github.com/troupe-go/troupe/stages/timeout"
	"github.com/troupe-go/troupe/troupetest"
)

// In the default mode too, work that ignores its context keeps its permit
// in a limit outside the timeout until it really ends: the deadline answers
// the path, but the limit never admits more work than it allows.
//
// spec: HR9, C1
func TestHR9_WorkThatIgnoresItsContextKeepsTheLimitSlotInTheDefaultMode(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sys := troupetest.NewSystem(t)
		work := newStubborn(10 * time.Second)
		to, err := timeout.New[int, int](sys, actors.Func(work.fn), time.Second)
		require.NoError(t, err)
		lim, err := limit.New[int, int](sys, to, 1)
		require.NoError(t, err)
		ctx := context.Background()
		a := troupetest.GoTimed[int, int](ctx, lim, 1)
		synctest.Wait()
		b := troupetest.GoTimed[int, int](ctx, lim, 2)
		time.Sleep(5 * time.Second)
		synctest.Wait()
		began, _ := work.times()
		assert.Equal(t, []time.Duration{0}, began, "b waits while a's work runs, past a's deadline")
		ra := <-a
		assert.ErrorIs(t, ra.Err, timeout.ErrTimeout)
		rb := <-b
		assert.ErrorIs(t, rb.Err, timeout.ErrTimeout)
		began, _ = work.times()
		assert.Equal(t, []time.Duration{0, 10 * time.Second}, began, "b's work started when a's ended")
		assert.Equal(t, 1, lim.Available())
	})
}
