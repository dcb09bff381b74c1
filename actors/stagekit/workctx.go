package stagekit

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"
)

// workCtx is the context the downstream work of a call runs with: the
// caller's, also cancelled when the stage the call entered by is closed and
// Close's own context ends before the call finished (the call is abandoned:
// its work is told to stop, and its Err is that stage's *troupe.ClosedError),
// and, for work the caller runs itself, when the call's outcome is delivered
// while the work runs (StopWork; its Err is then context.DeadlineExceeded if
// that outcome is a deadline's, a Timeout's, and context.Canceled
// otherwise).
// It is 40 bytes and costs no goroutine; the channel and the links to the
// cancellations (workWatch) are made only if the work asks for Done.
type workCtx struct {
	context.Context                           // the caller's context (or a stage's below it)
	closed          *closeSignal              // the entry stage's abandon signal, or nil; never changed
	watch           atomic.Pointer[workWatch] // made by the first Done
	stopped         atomic.Int32              // the call's outcome came while the work ran (StopWork): stopCanceled or stopDeadline
}

// closeSignal is a stage's abandon signal: its context is cancelled, with
// the close error as its cause, when the stage abandons its callers' work.
type closeSignal struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
}

func newCloseSignal() *closeSignal {
	ctx, cancel := context.WithCancelCause(context.Background())
	return &closeSignal{ctx: ctx, cancel: cancel}
}

// workWatch is the part of a workCtx made when the work asks for Done.
type workWatch struct {
	done chan struct{} // closed when either cancellation happens

	mu     sync.Mutex
	stops  [2]func() bool // unlink from the two cancellations; guarded by mu
	closes bool           // done was closed; guarded by mu
	fns    AfterFuncs     // AfterFunc registrations; guarded by mu
}

// Why a work context was stopped (workCtx.stopped).
const (
	stopCanceled = 1 + iota
	stopDeadline
)

// workCtxSlab hands out work contexts 64 at a time: one allocation for 64
// calls. A handed-out context is never reused (work may keep its context
// after the call); a slab is freed once all of its contexts are
// unreachable. A caller keeps a slab of its own (callState.ctxs), so that
// the leaf work it runs takes a context with no synchronisation at all;
// work on goroutines of its own shares the pool.
type workCtxSlab struct {
	next int // owned by whoever holds the slab
	ctxs [64]workCtx
}

var workCtxSlabs sync.Pool

// newWorkCtx returns a work context for parent and closed, carved from
// *own when the calling goroutine owns a slab (own not nil), or from the
// pool.
func newWorkCtx(own **workCtxSlab, parent context.Context, closed *closeSignal) *workCtx {
	var sl *workCtxSlab
	if own != nil {
		if sl = *own; sl == nil || sl.next == len(sl.ctxs) {
			sl = new(workCtxSlab)
			*own = sl
		}
	} else if sl, _ = workCtxSlabs.Get().(*workCtxSlab); sl == nil {
		sl = new(workCtxSlab)
	}
	c := &sl.ctxs[sl.next]
	if sl.next++; own == nil && sl.next < len(sl.ctxs) {
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
	if c.closed != nil && c.closed.ctx.Err() != nil {
		return context.Cause(c.closed.ctx)
	}
	switch c.stopped.Load() {
	case stopCanceled:
		return context.Canceled
	case stopDeadline:
		return context.DeadlineExceeded
	}
	return nil
}

// StopWork cancels the context: its call has its outcome, and nobody waits
// for the work any more (a work context is a WorkStopper too). Safe from
// any goroutine.
func (c *workCtx) StopWork(outcome error) {
	why := int32(stopCanceled)
	if outcome != nil && errors.Is(outcome, context.DeadlineExceeded) {
		why = stopDeadline // a timeout: the work sees its deadline, as the Timeout's own context says right after
	}
	c.stopped.CompareAndSwap(0, why)
	if w := c.watch.Load(); w != nil {
		w.cancel()
	}
}

func (c *workCtx) Done() <-chan struct{} {
	if w := c.watch.Load(); w != nil {
		return w.done
	}
	w := &workWatch{done: make(chan struct{})}
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
		w.stops[0] = context.AfterFunc(c.Context, w.cancel)
	}
	if c.closed != nil {
		w.stops[1] = context.AfterFunc(c.closed.ctx, w.cancel)
	}
	return w.done
}

func (w *workWatch) cancel() {
	w.mu.Lock()
	w.closeLocked()
	fns := w.fns.Take()
	w.mu.Unlock()
	w.release()
	fns.Run()
}

// AfterFunc runs f once the context is done (synchronously, from the
// cancellation: the context package registers only non-blocking functions
// here), unless stop is called first. The context package finds it, so
// that a context derived from this one (context.WithCancel, WithTimeout,
// what an HTTP or gRPC client does with every call) follows it without a
// goroutine of its own. As with Done, a context whose call is over no
// longer follows the cancellations it was linked to.
func (c *workCtx) AfterFunc(f func()) (stop func() bool) {
	c.Done() // makes the watch and links it
	w := c.watch.Load()
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closes {
		return AfterDone(f)
	}
	return w.fns.Add(&w.mu, f)
}

func (w *workWatch) closeLocked() {
	if !w.closes {
		w.closes = true
		close(w.done)
	}
}

// release unlinks from the two cancellations, so that a long-lived stage
// does not keep a registration per call.
func (w *workWatch) release() {
	w.mu.Lock()
	stops := w.stops
	w.stops = [2]func() bool{}
	w.mu.Unlock()
	for _, stop := range stops {
		if stop != nil {
			stop()
		}
	}
}

// release unlinks the context from the two cancellations once the work is
// over. It costs an atomic load when the work never asked for Done.
func (c *workCtx) release() {
	if w := c.watch.Load(); w != nil {
		w.release()
	}
}

// closeSignalOf returns s's abandon signal, made on first use: an idle
// stage has none (a context per stage would be most of an idle pipeline's
// memory).
func (s *Stage[Req, Res]) closeSignalOf() *closeSignal {
	ent := s.ent()
	if c := ent.closed.Load(); c != nil {
		return c
	}
	c := newCloseSignal()
	if !ent.closed.CompareAndSwap(nil, c) {
		c.cancel(nil)
		return ent.closed.Load()
	}
	return c
}
