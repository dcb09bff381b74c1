package stagekit

import (
	"context"
	"sync"
)

// workCtx is the context the downstream work of a call runs with when no
// stage made one it can run with as it is (see WorkStopper): the caller's
// (or a stage's below it), also cancelled when the stage the call entered
// by is closed and Close's own context ends before the call finished (the
// call is abandoned: its work is told to stop, and its Err is that stage's
// *troupe.ClosedError), and, for work the caller runs itself, when the
// call's outcome is delivered from elsewhere while the work runs
// (StopWork). Once the work returns its outcome, it is settled: only the
// caller's context ends it (see CtxCore).
// It is 40 bytes and costs no goroutine; the channel and the links to the
// cancellations are made only if the work asks for Done.
type workCtx struct {
	CtxCore
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
	c.init(parent, closed)
	return c
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
