package hedge

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
)

// attemptCtx is the context one attempt of a request runs with: the
// request's context, which the stage can also cancel (the attempt lost) or
// unlink from the request's context without cancelling (the attempt won:
// the work may still read its response with it). It costs one allocation:
// the channel and the link to the parent are made only when someone asks
// for Done, and it implements the context package's AfterFunc hook, so a
// context derived from it costs no goroutine either.
//
// NOTE: like the Timeout stage's contexts and the runtime's work contexts,
// a released context no longer follows its parent's cancellation through
// a Done channel handed out before release (Err still does).
type attemptCtx struct {
	context.Context // the request's context

	err      atomic.Pointer[error] // set once, under mu
	mu       sync.Mutex
	done     chan struct{} // made by the first Done; guarded by mu
	fns      []*func()     // AfterFunc registrations; guarded by mu
	link     func() bool   // unlinks from the parent; guarded by mu
	released bool          // unlinked for good; guarded by mu
	linkOnce sync.Once
}

var closedChan = func() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}()

func newAttemptCtx(parent context.Context) *attemptCtx { return &attemptCtx{Context: parent} }

func (c *attemptCtx) Err() error {
	if p := c.err.Load(); p != nil {
		return *p
	}
	return c.Context.Err()
}

func (c *attemptCtx) Done() <-chan struct{} {
	c.mu.Lock()
	if c.done == nil {
		switch {
		case c.err.Load() != nil:
			c.done = closedChan
		case c.released:
			c.mu.Unlock()
			return c.Context.Done() // a plain view of the parent from now on
		default:
			c.done = make(chan struct{})
		}
	}
	d := c.done
	c.mu.Unlock()
	c.follow()
	return d
}

// AfterFunc runs f (synchronously, from cancel: the context package only
// registers non-blocking functions here) once the context is cancelled,
// unless stop is called first. The context package finds it, so that a
// context derived from this one needs no goroutine to follow it.
func (c *attemptCtx) AfterFunc(f func()) (stop func() bool) {
	c.mu.Lock()
	if c.err.Load() != nil {
		c.mu.Unlock()
		go f()
		return func() bool { return false }
	}
	if c.released {
		c.mu.Unlock()
		return context.AfterFunc(c.Context, f)
	}
	reg := &f
	c.fns = append(c.fns, reg)
	c.mu.Unlock()
	c.follow()
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		i := slices.Index(c.fns, reg)
		if i < 0 {
			return false
		}
		c.fns = slices.Delete(c.fns, i, i+1)
		return true
	}
}

// follow links the context to its parent's cancellation, once, when
// someone watches it. It runs without mu: the parent may call back.
func (c *attemptCtx) follow() {
	c.linkOnce.Do(func() {
		if c.Context.Done() == nil {
			return
		}
		stop := context.AfterFunc(c.Context, func() { c.cancel(c.Context.Err()) })
		c.mu.Lock()
		if c.err.Load() != nil || c.released {
			c.mu.Unlock()
			stop()
			return
		}
		c.link = stop
		c.mu.Unlock()
	})
}

// cancel ends the context with err; only the first call counts.
func (c *attemptCtx) cancel(err error) {
	c.mu.Lock()
	if c.err.Load() != nil || c.released {
		c.mu.Unlock()
		return
	}
	c.err.Store(&err)
	if c.done != nil {
		close(c.done)
	} else {
		c.done = closedChan
	}
	fns, link := c.fns, c.link
	c.fns, c.link = nil, nil
	c.mu.Unlock()
	if link != nil {
		link()
	}
	for _, f := range fns {
		(*f)()
	}
}

// release unlinks the context from its parent without cancelling it: its
// attempt won, and its work may still use it (a response body read after
// the call). Err still reports the parent's cancellation.
func (c *attemptCtx) release() {
	c.mu.Lock()
	if c.err.Load() != nil || c.released {
		c.mu.Unlock()
		return
	}
	c.released = true
	link := c.link
	c.link, c.fns = nil, nil
	c.mu.Unlock()
	if link != nil {
		link()
	}
}
