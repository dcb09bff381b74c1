package stagekit

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// workCtx is the context the downstream work of a call runs with: the
// caller's, also cancelled when the stage the call entered by is closed and
// Close's own context ends before the call finished (the call is abandoned:
// its work is told to stop, and its Err is that stage's *troupe.ClosedError).
// It costs no goroutine; the channel and the links to the two
// cancellations are made only if the work asks for Done.
type workCtx struct {
	context.Context                 // the caller's context (or a stage's below it)
	closed          context.Context // the entry stage's abandon signal; never changed

	mu     sync.Mutex
	done   chan struct{}  // made on first Done; guarded by mu
	stops  [2]func() bool // unlink from the two cancellations; guarded by mu
	closes bool           // done was closed; guarded by mu
	linked atomic.Bool    // stops were set: release has work to do
}

// workCtxSlab hands out work contexts 32 at a time: one allocation for 32
// calls instead of one each. A handed-out context is never reused (work may
// keep its context after the call); a slab is freed once all of its
// contexts are unreachable.
type workCtxSlab struct {
	next int // owned by whoever took the slab from the pool
	ctxs [32]workCtx
}

var workCtxSlabs sync.Pool

func newWorkCtx(parent, closed context.Context) *workCtx {
	sl, _ := workCtxSlabs.Get().(*workCtxSlab)
	if sl == nil {
		sl = new(workCtxSlab)
	}
	c := &sl.ctxs[sl.next]
	if sl.next++; sl.next < len(sl.ctxs) {
		workCtxSlabs.Put(sl)
	}
	c.Context, c.closed = parent, closed
	return c
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
			c.linked.Store(true)
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
// It costs an atomic load when the work never asked for Done.
func (c *workCtx) release() {
	if !c.linked.Load() {
		return
	}
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
