package hedge

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/troupe-go/troupe/actors/stagekit"
)

// attemptCtx is the context one attempt of a request runs with: the
// request's context, which the stage can also cancel (the attempt lost) or
// unlink from the request's context without cancelling (the attempt won:
// the work may still read its response with it). The stage carves it
// from a slab (ctxSlab), so that it costs no allocation of its own: the
// channel and the link to the parent are made only when someone asks for
// Done, and it implements the context package's AfterFunc hook, so a
// context derived from it costs no goroutine either.
//
// NOTE: like the Timeout stage's contexts and the runtime's work contexts,
// a released context no longer follows its parent's cancellation through
// a Done channel handed out before release (Err still does).
//
// An attemptCtx is safe for concurrent use, as a context must be.
type attemptCtx struct {
	context.Context // the request's context

	err    atomic.Pointer[error] // set once, under mu
	mu     sync.Mutex
	done   chan struct{}       // made by the first Done; guarded by mu
	fns    stagekit.AfterFuncs // AfterFunc registrations; guarded by mu
	link   func() bool         // unlinks from the parent; guarded by mu
	linked bool                // following the parent has begun (see follow); guarded by mu

	// flags holds ctxReleased and ctxWatched, each set once by an atomic
	// Or that returns the other: of release and the first watcher, the
	// later one sees the earlier, so that a release with nobody watching
	// takes no lock, and a watcher coming after it sees the plain parent.
	flags atomic.Uint32
}

// attemptCtx flags.
const (
	ctxReleased uint32 = 1 << iota // unlinked for good
	ctxWatched                     // Done or AfterFunc was called
)

var closedChan = func() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}()

func newAttemptCtx(parent context.Context) *attemptCtx { return &attemptCtx{Context: parent} }

// ctxSlab hands out attempt contexts 63 at a time: one allocation of 4 KiB
// (64 bytes a context on 64-bit platforms, a cache line each) for 63
// attempts, none for the others. A context handed out is never reused, since work may keep its
// context after its attempt (as the runtime's work contexts are never
// reused); a slab is freed once none of its contexts is reachable any
// more.
//
// Not safe for concurrent use: the stage's actor owns its slab.
type ctxSlab struct {
	ctxs [63]attemptCtx
	next int
}

// take returns a fresh context of the slab for parent, or nil when the
// slab is used up.
func (s *ctxSlab) take(parent context.Context) *attemptCtx {
	if s == nil || s.next == len(s.ctxs) {
		return nil
	}
	c := &s.ctxs[s.next]
	s.next++
	c.Context = parent
	return c
}

func (c *attemptCtx) Err() error {
	if p := c.err.Load(); p != nil {
		return *p
	}
	return c.Context.Err()
}

func (c *attemptCtx) Done() <-chan struct{} {
	c.mu.Lock()
	released := c.watch()
	if c.done == nil {
		switch {
		case c.err.Load() != nil:
			c.done = closedChan
		case released:
			c.mu.Unlock()
			return c.Context.Done() // a plain view of the parent from now on
		default:
			c.done = make(chan struct{})
		}
	}
	d := c.done
	link := c.linkLocked()
	c.mu.Unlock()
	if link {
		c.follow()
	}
	return d
}

// AfterFunc runs f (synchronously, from cancel: the context package only
// registers non-blocking functions here) once the context is cancelled,
// unless stop is called first. The context package finds it, so that a
// context derived from this one needs no goroutine to follow it.
func (c *attemptCtx) AfterFunc(f func()) (stop func() bool) {
	c.mu.Lock()
	released := c.watch()
	if c.err.Load() != nil {
		c.mu.Unlock()
		return stagekit.AfterDone(f)
	}
	if released {
		c.mu.Unlock()
		return context.AfterFunc(c.Context, f)
	}
	stop = c.fns.Add(&c.mu, f)
	link := c.linkLocked()
	c.mu.Unlock()
	if link {
		c.follow()
	}
	return stop
}

// watch marks the context watched (mu held) and reports whether it was
// released before.
func (c *attemptCtx) watch() (released bool) {
	return c.flags.Or(ctxWatched)&ctxReleased != 0
}

func (c *attemptCtx) isReleased() bool { return c.flags.Load()&ctxReleased != 0 }

// linkLocked reports whether the caller, who watches the context, must
// link it to its parent's cancellation (follow): the first watcher of a
// context neither cancelled nor released does (mu held).
func (c *attemptCtx) linkLocked() bool {
	if c.linked || c.err.Load() != nil || c.isReleased() {
		return false
	}
	c.linked = true
	return true
}

// follow links the context to its parent's cancellation, for the watcher
// linkLocked chose. It runs without mu: the parent may call back.
func (c *attemptCtx) follow() {
	if c.Context.Done() == nil {
		return
	}
	stop := context.AfterFunc(c.Context, func() { c.cancel(c.Context.Err()) })
	c.mu.Lock()
	if c.err.Load() != nil || c.isReleased() {
		c.mu.Unlock()
		stop()
		return
	}
	c.link = stop
	c.mu.Unlock()
}

// cancel ends the context with err; only the first call counts.
func (c *attemptCtx) cancel(err error) {
	c.mu.Lock()
	if c.err.Load() != nil || c.isReleased() {
		c.mu.Unlock()
		return
	}
	c.err.Store(&err)
	if c.done != nil {
		close(c.done)
	} else {
		c.done = closedChan
	}
	fns, link := c.fns.Take(), c.link
	c.link = nil
	c.mu.Unlock()
	if link != nil {
		link()
	}
	fns.Run()
}

// release unlinks the context from its parent without cancelling it: its
// attempt won, and its work may still use it (a response body read after
// the call). Err still reports the parent's cancellation. A context
// cancelled already stays so (its err is what counts); one nobody watched
// costs one atomic operation.
func (c *attemptCtx) release() {
	if c.flags.Or(ctxReleased)&ctxWatched == 0 {
		return // nothing is linked, and a watcher from now on sees released
	}
	c.mu.Lock()
	link := c.link
	c.link = nil
	c.fns.Take() // never to run: the context is no longer cancelled
	c.mu.Unlock()
	if link != nil {
		link()
	}
}
