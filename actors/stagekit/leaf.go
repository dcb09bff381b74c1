package stagekit

import (
	"context"
	"errors"
)

// Leaf is the downstream call a leaf service hands to the caller through
// Envelope.HandToCaller. Call runs on the caller's goroutine and may block;
// it should honour ctx. A Leaf that also has a Name() string method is named
// in the *troupe.PanicError its panic becomes.
//
// Call runs on the caller's goroutine; a Leaf shared by many calls must be safe for concurrent use.
//
// A Leaf that holds a unit of its service's capacity (a permit won in the
// background, a mock's unit) also has a Release() method: it is called
// instead of Call when the work is dropped unrun because its caller no
// longer waits, so the unit comes back.
type Leaf[Req, Res any] interface {
	Call(ctx context.Context, req Req) (Res, error)
}

// dropLeaf gives back the unit a leaf dropped unrun holds, if it holds one.
func dropLeaf[Req, Res any](l Leaf[Req, Res]) {
	if r, ok := l.(interface{ Release() }); ok {
		_ = Guard("leaf Release", r.Release)
	}
}

// runLeaf runs e's leaf work on the caller's goroutine and answers e with
// its outcome. A panic in the work becomes a *troupe.PanicError outcome.
// While the work runs, the slots of HoldUntilOutcome stages it passed stay
// taken even if an outcome is forced past them (a timeout fires): work that
// ignores its context still counts against the limits above it. Only
// envelopes a stage marked forcible (ForcesOutcome) pay for that.
//
// wc is the work's context, made by workCtx on the caller's goroutine.
func (e *Envelope[Req, Res]) runLeaf(wc *workCtx) {
	c := e.root.call
	forcible := e.forcible
	if forcible {
		c.running.Add(1)
	}
	res, err := e.callLeaf(wc)
	free := c.leafReturned(wc)
	if forcible {
		c.workEnded()
	}
	e.Answer(res, err)
	if free != nil {
		free()
	}
}

// runDetached runs e's leaf work on a goroutine of its own (see Detach).
// The work has ended once it returns, whatever became of its outcome: the
// slots kept for it are freed before e is answered.
func (e *Envelope[Req, Res]) runDetached() {
	wc := e.workCtx(nil)
	res, err := e.callLeaf(wc)
	if wc != nil {
		wc.Settle()
	}
	e.root.call.workEnded() // e's path still holds the root
	e.Answer(res, err)
}

// WorkStopper is implemented by a context a stage makes for the work below
// it (Envelope.SetCtx, with cancelledOnClose true) that can also be told
// that the call is over. Leaf work the caller runs then gets that context
// as it is, instead of one made for the purpose around it (see workCtx):
// an allocation less per call.
//
// StopWork is called at most once per call: when the call's outcome is
// delivered from elsewhere while its caller still runs leaf work with this
// context (a stage answered it meanwhile: it timed out, it closed, a hedge
// won), never for the work's own outcome, which may still be in use after
// the call (a response body). From then on the context must report itself
// done, with context.DeadlineExceeded if outcome is a deadline's
// (errors.Is) and context.Canceled otherwise, unless it already was. It
// runs on whichever goroutine delivers the outcome: it must be safe for
// concurrent use, must not block, and should not allocate. CtxCore
// implements it.
type WorkStopper interface {
	context.Context
	StopWork(outcome error)
}

// workStopper returns e's context when the caller's leaf work can run with
// it as it is (see WorkStopper), nil otherwise.
func (e *Envelope[Req, Res]) workStopper() WorkStopper {
	if !e.ctxClosed {
		return nil
	}
	ws, _ := e.Ctx.(WorkStopper)
	return ws
}

// workCtx makes the context e's leaf work runs with (see workCtx), carved
// from *slab when the calling goroutine owns one (the caller's), from the
// shared pool otherwise (slab nil). Work on a goroutine of its own needs
// one only when the entry stage can abandon it (nil otherwise); the
// caller's work has one, which its call's outcome stops too
// (callState.leafCtx), unless its context is a WorkStopper: the context it
// would otherwise get may be one a stage below the entry made and let go
// of with that outcome, which nothing cancels any more.
func (e *Envelope[Req, Res]) workCtx(slab **workCtxSlab) *workCtx {
	var closed *closeSignal
	if entry := e.root.call.entry; entry != nil && !e.ctxClosed {
		closed = entry.closeSignalOf()
	}
	if closed == nil && slab == nil {
		return nil
	}
	return newWorkCtx(slab, e.Ctx, closed)
}

// callLeaf runs e's leaf work on the calling goroutine, with the work
// context wc (nil: e's own context).
func (e *Envelope[Req, Res]) callLeaf(wc *workCtx) (Res, error) {
	l := e.leaf
	e.leaf = nil
	var ctx context.Context = e.Ctx
	if wc != nil {
		ctx = wc
	}
	var res Res
	var err error
	if e.obs != nil {
		res, err = e.runObserved(l, ctx)
	} else {
		res, err = safeRun(l, ctx, e.Req)
	}
	if wc != nil {
		if err != nil && wc.closed != nil && wc.closed.ctx.Err() != nil && errors.Is(err, context.Canceled) && e.Ctx.Err() == nil {
			err = wc.Err() // the work stopped because it was abandoned
		}
	}
	return res, err
}

func safeRun[Req, Res any](l Leaf[Req, Res], ctx context.Context, req Req) (res Res, err error) {
	defer func() {
		if v := recover(); v != nil {
			where := "leaf"
			if n, ok := l.(interface{ Name() string }); ok {
				where = n.Name()
			}
			err = newPanicError(where, v)
		}
	}()
	return l.Call(ctx, req)
}
