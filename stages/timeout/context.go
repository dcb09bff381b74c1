package timeout

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/troupe-go/troupe/actors/stagekit"
)

// callCtx is the context a request carries below a Timeout stage: its
// parent's, with the stage's deadline, which the stage enforces itself
// (cancelling it when the deadline passes or the stage closes with the
// call running). Once the call has its outcome, the deadline no longer
// applies: only the parent ends it (stagekit.CtxCore), so that a response
// body the work returned stays readable. It costs one allocation and no
// timer; the channel and the link to the parent's cancellation are made
// only if someone asks for Done.
type callCtx struct {
	stagekit.CtxCore

	// The stage's deadline for the call, as clock.At(off): 16 bytes where a
	// time.Time takes 24, which keeps the context in 64 bytes. Set by
	// OnSend before the context is handed on, never changed.
	clock *stagekit.Clock
	off   time.Duration

	work atomic.Int32 // Abandon mode: workRunning, workAbandoned or workEnded
}

// Deadline is the stage's deadline, or the parent's if earlier, until the
// call has its outcome; the parent's from then on.
func (c *callCtx) Deadline() (time.Time, bool) {
	d, ok := c.Context.Deadline()
	if c.Settled() {
		return d, ok
	}
	if mine := c.clock.At(c.off); !ok || mine.Before(d) {
		return mine, true
	}
	return d, true
}

// The causes the stage cancels a context with, shared: no allocation per
// call.
var (
	causeDeadline = context.DeadlineExceeded
	causeCanceled = context.Canceled
)
