package stagekit

import (
	"context"
	"sync/atomic"

	"github.com/troupe-go/troupe/internal/ilist"
)

// wait is the caller's side of a call on root envelope r: it runs the leaf
// work handed to it and returns the outcome. When ctx ends first, the caller
// gives up: it claims the delivery frame, answers the work still queued for
// it with ctx's error, and returns that error; the stages still holding the
// request answer it the same way when they next look at it.
func (r *Envelope[Req, Res]) wait(ctx context.Context) (Res, error) {
	c := r.call
	done := ctx.Done()
	for {
		c.mu.Lock()
		c.leafCtx = nil // the leaf work run last, if any, is over
		if c.done {
			c.mu.Unlock()
			return r.delivered()
		}
		if c.work.Len() != 0 && ended(done) {
			// Its context ended: it starts no more work (stubborn work
			// would keep it), it gives up, and what is queued is answered.
			c.mu.Unlock()
			if r.frames[0].done.CompareAndSwap(false, true) {
				c.entry.answered(c)
				return r.abandon(ctx.Err())
			}
			done = nil // the outcome is being delivered right now: wait for it
			c.mu.Lock()
		}
		var w *Envelope[Req, Res]
		if done != nil || ctx.Done() == nil {
			w = c.popWork()
		}
		if w != nil {
			var wc *workCtx // nil: the work runs with its own context
			if ws := w.workStopper(); ws != nil {
				c.leafCtx = ws
			} else {
				wc = w.workCtx(&c.ctxs)
				c.leafCtx = wc
			}
			c.inLeaf.Store(true)
			c.mu.Unlock()
			w.runLeaf(wc)
			if atomic.LoadUint32(&c.gone) != 0 {
				// Delivered (by this leaf's own outcome, mostly): done, res
				// and err were set before gone, and no work is queued
				// after it (deliver set abandoned), so they are read
				// without mu. Only this goroutine changes them from now.
				return r.delivered()
			}
			continue
		}
		c.sleeping = true
		c.mu.Unlock()
		if done == nil {
			<-c.wake
			continue
		}
		select {
		case <-c.wake:
		case <-done:
			c.mu.Lock()
			if !c.sleeping {
				<-c.wake // a token is on its way: take it, so none is left over
			}
			c.sleeping = false
			c.mu.Unlock()
			if r.frames[0].done.CompareAndSwap(false, true) {
				c.entry.answered(c)
				return r.abandon(ctx.Err())
			}
			done = nil // the outcome is being delivered right now: wait for it
		}
	}
}

// ended reports whether done (a context's Done, nil: none) is closed,
// without waiting.
func ended(done <-chan struct{}) bool {
	if done == nil {
		return false
	}
	select {
	case <-done:
		return true
	default:
		return false
	}
}

// delivered returns the outcome delivered to the caller of r (deliver set
// done, res, err and abandoned, then gone, which the caller has seen), and
// answers the work queued for it before that with ErrCallerGone. The
// caller's goroutine only.
func (r *Envelope[Req, Res]) delivered() (Res, error) {
	c := r.call
	c.leafCtx = nil // only deliver reads it, and it has run
	if c.work.Len() != 0 {
		orphans := c.work.Take()
		answerAll(&orphans, ErrCallerGone)
	}
	// Counted off only now, not when the outcome was delivered: a caller
	// still running leaf work whose outcome came first (a stage answered
	// it as it closed) is one a Close abandons.
	c.entry.answered(c)
	return c.res, c.err
}

func (r *Envelope[Req, Res]) abandon(err error) (Res, error) {
	r.leave(err)
	var zero Res
	return zero, err
}

// leave marks the caller gone: the work still queued for it, and any
// handed to it later, is answered with err.
func (r *Envelope[Req, Res]) leave(err error) {
	c := r.call
	c.mu.Lock()
	if c.abandoned == nil {
		c.abandoned = err
	}
	atomic.StoreUint32(&c.gone, 1)
	w := c.work.Take()
	c.mu.Unlock()
	answerAll(&w, err)
}

// answerAll answers a list of queued work, taken from its caller, with
// err.
func answerAll[Req, Res any](work *ilist.List[Envelope[Req, Res]], err error) {
	var zero Res
	for w := work.Front(); w != nil; w = work.Front() {
		work.Remove(&w.queued)
		if l := w.leaf; l != nil {
			w.leaf = nil
			dropLeaf(l)
		}
		w.Answer(zero, err)
	}
}
