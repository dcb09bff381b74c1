package actors

import (
	"context"
	"sync"
	"time"
)

// CancelledOnClose is implemented by a context that a stage hands down with
// a request and cancels itself, with its *troupe.ClosedError, when it is
// closed while the call still runs (Timeout's). The work then runs with
// that context as it is: the stage the call entered by does not wrap it
// again (a wrapper costs an allocation per call), since closing a stack
// closes every stage.
type CancelledOnClose interface {
	context.Context
	CancelledOnClose()
}

// workCtx is the context the downstream work of a call runs with: the
// caller's, also cancelled when the stage the call entered by is closed and
// Close's own context ends before the call finished (the call is abandoned:
// its work is told to stop, and its Err is that stage's *troupe.ClosedError).
// It costs one allocation and no goroutine; the channel and the links to the
// two cancellations are made only if the work asks for Done.
type workCtx struct {
	context.Context                 // the caller's context (or a stage's below it)
	closed          context.Context // the entry stage's abandon signal; never changed

	mu     sync.Mutex
	done   chan struct{}  // made on first Done; guarded by mu
	stops  [2]func() bool // unlink from the two cancellations; guarded by mu
	closes bool           // done was closed; guarded by mu
}

func newWorkCtx(parent, closed context.Context) *workCtx {
	return &workCtx{Context: parent, closed: closed}
}

func (c *workCtx) Deadline() (time.Time, bool) { return c.Context.Deadline() }

func (c *workCtx) Err() error {
	if err := c.Context.Err(); err != nil {
		return err
	}
	if c.closed.Err() != nil {
		return context.Cause(c.closed)
	}
	return nil
}

func (c *workCtx) Done() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done == nil {
		c.done = make(chan struct{})
		if c.Err() != nil {
			c.closeLocked()
		} else {
			if c.Context.Done() != nil {
				c.stops[0] = context.AfterFunc(c.Context, c.cancel)
			}
			c.stops[1] = context.AfterFunc(c.closed, c.cancel)
		}
	}
	return c.done
}

func (c *workCtx) cancel() {
	c.mu.Lock()
	c.closeLocked()
	c.mu.Unlock()
	c.release()
}

func (c *workCtx) closeLocked() {
	if !c.closes {
		c.closes = true
		close(c.done)
	}
}

// release unlinks the context from the two cancellations once the work is
// over, so that a long-lived stage does not keep a registration per call.
func (c *workCtx) release() {
	c.mu.Lock()
	stops := c.stops
	c.stops = [2]func() bool{}
	c.mu.Unlock()
	for _, stop := range stops {
		if stop != nil {
			stop()
		}
	}
}
