package stagekit

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
)

// CtxCore is the core of every context a stage makes for the work below it
// (a Timeout's, a Hedge's attempt's, the runtime's around the caller's leaf
// work): its parent's context, which the stage may also cancel while the
// call runs (Cancel: the deadline, a lost hedge, a Close that gives up),
// until the call's outcome is delivered (Settle). From then on only the
// parent ends it: the work's outcome may still be in use (a response body
// read after the call returns), and it stays readable for as long as the
// caller's own context lives.
//
// It costs no goroutine and, until someone asks for Done, no allocation.
// The link to the parent's cancellation made by the first Done is held by
// a part of its own, so that it lives only as long as the context is
// reachable: a context kept by a response the caller still reads follows
// its parent, and one nobody can reach any more is unlinked by the garbage
// collector (runtime.AddCleanup) even when its parent lives on.
//
// Embed it in the context type, and set its parent with Init before the
// context is handed on. The context type must not point at its stage
// (keep what it needs, a clock say, out of line): the cleanup that undoes
// the link holds the parent, and a context its parent's stage can reach
// would then never be freed, nor the system holding both. Its methods are safe for concurrent use, as a
// context's must be.
type CtxCore struct {
	context.Context // the parent; set by Init, never changed

	// err is the stage's cancellation, or one of the marks settled and
	// abandoned: set once, so that the context is 40 bytes. A context is
	// settled when its call's outcome is delivered, abandoned when its
	// close signal was seen to end it (by Err, or by its watch) before
	// that: whichever comes first stands, and Err never changes once it
	// reported an error.
	err    atomic.Pointer[error]
	watch  atomic.Pointer[ctxWatch] // made by the first Done or AfterFunc
	closed *closeSignal             // also ends it until settled (the entry stage's abandon signal); set by init
}

// The marks a CtxCore's err takes that are not errors of its own; only
// their addresses count.
var (
	settledMark   error = errors.New("settled")
	abandonedMark error = errors.New("abandoned")
)

// ctxWatch is the part of a CtxCore made when the work asks for Done. The
// parent's cancellation holds it, not the context (see CtxCore).
type ctxWatch struct {
	done chan struct{}

	mu     sync.Mutex
	closes bool           // done was closed; guarded by mu
	fns    AfterFuncs     // AfterFunc registrations; guarded by mu
	links  [2]func() bool // unlink from the parent and the close signal; guarded by mu
}

// Errors StopWork ends a context with, shared: no allocation per call.
var (
	errStopCanceled = context.Canceled
	errStopDeadline = context.DeadlineExceeded
)

// Init readies c to follow parent. Call it once, before the context is
// handed on.
func (c *CtxCore) Init(parent context.Context) { c.Context = parent }

func (c *CtxCore) init(parent context.Context, closed *closeSignal) {
	c.Context, c.closed = parent, closed
}

// Err reports the stage's cancellation, or else the parent's.
func (c *CtxCore) Err() error {
	if p := c.err.Load(); p != nil && p != &settledMark && p != &abandonedMark {
		return *p
	}
	if err := c.Context.Err(); err != nil {
		return err
	}
	if c.abandoned() {
		return context.Cause(c.closed.ctx)
	}
	return nil
}

// abandoned reports whether the close signal ended the context: it fired
// before the context settled.
func (c *CtxCore) abandoned() bool {
	if c.closed == nil || c.closed.ctx.Err() == nil {
		return false
	}
	return c.err.CompareAndSwap(nil, &abandonedMark) || c.err.Load() == &abandonedMark
}

// Done returns a channel closed when the context ends.
func (c *CtxCore) Done() <-chan struct{} {
	if w := c.watch.Load(); w != nil {
		return w.done
	}
	w := &ctxWatch{done: make(chan struct{})}
	if !c.watch.CompareAndSwap(nil, w) {
		return c.watch.Load().done
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if c.Err() != nil {
		w.closeLocked()
		return w.done
	}
	if c.Context.Done() != nil {
		w.links[0] = context.AfterFunc(c.Context, w.fire)
		runtime.AddCleanup(c, (*ctxWatch).unlink, w)
	}
	// Settle, racing: it settles, then looks for the watch, whose lock it
	// takes; so either it sees this watch and unlinks the signal after
	// this, or this sees it settled. A signal that fires all the same
	// after the context settled finds it so (abandoned) and does nothing.
	// The link holds the context only until its call ends.
	if c.closed != nil && c.err.Load() == nil {
		w.links[1] = context.AfterFunc(c.closed.ctx, func() {
			if c.abandoned() {
				w.fire()
			}
		})
	}
	return w.done
}

// AfterFunc runs f once the context is done (synchronously, from the
// cancellation: the context package registers only non-blocking functions
// here), unless stop is called first. The context package finds it, so
// that a context derived from this one (context.WithCancel, what an HTTP
// or gRPC client does with every call) follows it without a goroutine of
// its own.
func (c *CtxCore) AfterFunc(f func()) (stop func() bool) {
	c.Done() // makes the watch and links it
	w := c.watch.Load()
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closes {
		return AfterDone(f)
	}
	return w.fns.Add(&w.mu, f)
}

// CancelWith ends the context with *p (never changed afterwards: a shared
// error costs no allocation), unless it ended already or its call's outcome
// was delivered (Settle); it reports whether it did.
func (c *CtxCore) CancelWith(p *error) bool {
	if !c.err.CompareAndSwap(nil, p) {
		return false
	}
	if w := c.watch.Load(); w != nil {
		w.fire()
	}
	return true
}

// Cancel ends the context with err (see CancelWith).
func (c *CtxCore) Cancel(err error) bool { return c.CancelWith(&err) }

// StopWork ends the context because its call's outcome came from elsewhere
// while its work still runs (WorkStopper): with context.DeadlineExceeded if
// that outcome is a deadline's (a Timeout's), context.Canceled otherwise.
func (c *CtxCore) StopWork(outcome error) {
	p := &errStopCanceled
	if outcome != nil && errors.Is(outcome, context.DeadlineExceeded) {
		p = &errStopDeadline
	}
	c.CancelWith(p)
}

// Settle records that the call's outcome was delivered: nothing but the
// parent ends the context from now on. A context the stage cancelled
// already stays cancelled.
func (c *CtxCore) Settle() {
	if !c.err.CompareAndSwap(nil, &settledMark) || c.closed == nil {
		return
	}
	if w := c.watch.Load(); w != nil {
		w.mu.Lock()
		stop := w.links[1]
		w.links[1] = nil
		w.mu.Unlock()
		if stop != nil {
			stop()
		}
	}
}

// Settled reports whether Settle was called.
func (c *CtxCore) Settled() bool { return c.err.Load() == &settledMark }

// fire closes done and runs the registrations, once, and unlinks.
func (w *ctxWatch) fire() {
	w.mu.Lock()
	w.closeLocked()
	fns := w.fns.Take()
	w.mu.Unlock()
	w.unlink()
	fns.Run()
}

func (w *ctxWatch) closeLocked() {
	if !w.closes {
		w.closes = true
		close(w.done)
	}
}

// unlink stops following the parent and the close signal.
func (w *ctxWatch) unlink() {
	w.mu.Lock()
	links := w.links
	w.links = [2]func() bool{}
	w.mu.Unlock()
	for _, stop := range links {
		if stop != nil {
			stop()
		}
	}
}
