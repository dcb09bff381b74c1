package hedge

import (
	"context"

	"github.com/troupe-go/troupe/actors/stagekit"
)

// attemptCtx is the context one attempt of a request runs with: the
// request's context, which the stage also cancels when the attempt lost,
// and settles when it won: from then on only the request's context ends
// it, so that the work may still read its response with it
// (stagekit.CtxCore). The stage carves it from a slab (ctxSlab), so that
// it costs no allocation of its own: the channel and the link to the
// parent are made only when someone asks for Done, and it implements the
// context package's AfterFunc hook, so a context derived from it costs no
// goroutine either.
//
// An attemptCtx is safe for concurrent use, as a context must be.
type attemptCtx struct {
	stagekit.CtxCore
}

// causeLost is the error a losing attempt's context ends with, shared.
var causeLost = context.Canceled

func newAttemptCtx(parent context.Context) *attemptCtx {
	c := new(attemptCtx)
	c.Init(parent)
	return c
}

// lost cancels the context of an attempt that lost.
func (c *attemptCtx) lost() { c.CancelWith(&causeLost) }

// ctxSlab hands out attempt contexts 102 at a time: one allocation of 4 KiB
// (40 bytes a context on 64-bit platforms) for 102 attempts, none for the
// others. A context handed out is never reused, since work may keep its
// context after its attempt (as the runtime's work contexts are never
// reused); a slab is freed once none of its contexts is reachable any
// more.
//
// Not safe for concurrent use: the stage's actor owns its slab.
type ctxSlab struct {
	ctxs [102]attemptCtx
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
	c.Init(parent)
	return c
}
