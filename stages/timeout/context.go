package timeout

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/troupe-go/troupe/actors/stagekit"
)

// callCtx is the context a request carries below a Timeout stage: its
// parent's, with the stage's deadline, cancelled by the stage itself. It
// costs one allocation and no timer; the channel and the link to the
// parent's cancellation are made only if someone asks for Done.
type callCtx struct {
	context.Context // the parent

	// The stage's deadline for the call, as clock.At(off): 16 bytes where a
	// time.Time takes 24, which keeps the context in 80 bytes. Set by
	// OnSend before the context is handed on, never changed.
	clock *stagekit.Clock
	off   time.Duration

	mu   sync.Mutex
	done chan struct{}         // made on first Done; guarded by mu
	err  atomic.Pointer[error] // set once by cancel, under mu; read without it
	stop func() bool           // unlinks from the parent's cancellation; guarded by mu
	fns  stagekit.AfterFuncs   // AfterFunc registrations; guarded by mu

	watched atomic.Bool  // stop was set: release has work to do
	work    atomic.Int32 // Abandon mode: workRunning, workAbandoned or workEnded
}

var closedChan = func() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}()

func (c *callCtx) Deadline() (time.Time, bool) {
	mine := c.clock.At(c.off)
	if d, ok := c.Context.Deadline(); ok && d.Before(mine) {
		return d, true
	}
	return mine, true
}

func (c *callCtx) Done() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done != nil {
		return c.done
	}
	if c.err.Load() != nil {
		c.done = closedChan
		return c.done
	}
	c.done = make(chan struct{})
	if c.Context.Done() != nil {
		c.stop = context.AfterFunc(c.Context, func() { c.cancel(c.Context.Err()) })
		c.watched.Store(true)
	}
	return c.done
}

func (c *callCtx) Err() error {
	if err := c.err.Load(); err != nil {
		return *err
	}
	return c.Context.Err()
}

// cancel ends the context with err; only the first call counts.
func (c *callCtx) cancel(err error) { c.cancelWith(&err) }

// Errors StopWork ends a context with, shared: no allocation per call.
var (
	errStopCanceled = context.Canceled
	errStopDeadline = context.DeadlineExceeded
)

// StopWork ends the context once its call's outcome is delivered, so that
// leaf work still running with it (the caller's, which runs with this very
// context) stops: the outcome came from above the stage, or is the work's
// own.
func (c *callCtx) StopWork(outcome error) {
	if c.err.Load() != nil {
		return // the stage cancelled it already (the deadline, a close)
	}
	p := &errStopCanceled
	if outcome != nil && errors.Is(outcome, context.DeadlineExceeded) {
		p = &errStopDeadline
	}
	c.cancelWith(p)
}

// cancelWith ends the context with *p, which is never changed; only the
// first call counts.
func (c *callCtx) cancelWith(p *error) {
	c.mu.Lock()
	if c.err.Load() != nil {
		c.mu.Unlock()
		return
	}
	c.err.Store(p)
	if c.done != nil {
		close(c.done)
	} else {
		c.done = closedChan
	}
	stop, fns := c.stop, c.fns.Take()
	c.stop = nil
	c.mu.Unlock()
	if stop != nil {
		stop()
	}
	fns.Run()
}

// AfterFunc runs f once the context is cancelled (synchronously, from
// cancel: the context package registers only non-blocking functions here),
// unless stop is called first. The context package finds it, so that a
// context derived from this one (what an HTTP or gRPC client makes for
// every call) follows it without a goroutine of its own. Like Done, a
// context whose call is over (release) no longer follows its parent.
func (c *callCtx) AfterFunc(f func()) (stop func() bool) {
	c.Done() // makes the channel and links to the parent, once
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err.Load() != nil {
		return stagekit.AfterDone(f)
	}
	return c.fns.Add(&c.mu, f)
}

// release unlinks the context from its parent once the call is over,
// without cancelling it: the work it was given may still look at it.
func (c *callCtx) release() {
	if !c.watched.Load() {
		return // nobody asked for Done: nothing is linked
	}
	c.mu.Lock()
	stop := c.stop
	c.stop = nil
	c.mu.Unlock()
	if stop != nil {
		stop()
	}
}
