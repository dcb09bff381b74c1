package stagekit

import (
	"context"
	"sync"
)

// Origin is what the attempts made from a request need of it, taken by the
// stage holding the request (Envelope.Origin) so that attempts can still be
// made once the request itself has gone on down the path, where the stages
// below change it. Retry and Hedge send a request's first attempt on the
// request itself, and their later ones from its Origin.
//
// A plain value, safe for concurrent use once taken.
type Origin[Req, Res any] struct {
	root      *Envelope[Req, Res]
	rootDepth int // the root's frames the attempts' outcomes go on through
	ctx       context.Context
	detached  bool
	forcible  bool
	ctxClosed bool
}

// Origin returns e's origin (path holder only). It refers to e's root,
// which e's references keep from reuse: use it only while holding one.
func (e *Envelope[Req, Res]) Origin() Origin[Req, Res] {
	depth := e.rootDepth
	if e.root == e {
		depth = e.depth
	}
	return Origin[Req, Res]{root: e.root, rootDepth: depth, ctx: e.Ctx, detached: e.detached, forcible: e.forcible, ctxClosed: e.ctxClosed}
}

// NewChildOf is NewChild from the origin of the parent request: the
// attempt reports to the same caller and runs its leaf work the same way.
func NewChildOf[Req, Res any](pool *sync.Pool, o *Origin[Req, Res], ctx context.Context, req Req, h Hook[Req, Res]) *Envelope[Req, Res] {
	e := pool.Get().(*Envelope[Req, Res])
	e.pool = pool
	e.root, e.rootDepth = o.root, o.rootDepth
	e.root.Ref()
	e.detached, e.forcible = o.detached, o.forcible
	e.ctxClosed = o.ctxClosed && ctx == o.ctx
	e.Ctx, e.Req = ctx, req
	e.refs = 1 // a pooled envelope is ours alone: no fence (see Envelope.refs)
	e.frames[0].hook, e.frames[0].env = h, e
	e.depth = 1
	return e
}

// Claim completes the frames below f with an outcome, as CompleteAt(f.Pos()-1)
// would, without running f's own hook, and reports true; or reports false,
// changing nothing, when f was completed before. A stage that sent its
// request on down the path and then has an outcome of its own for it (a
// hedge that won) claims its frame this way, holding a reference on the
// envelope meanwhile; the outcome of the path below is then discarded when
// it reaches f.
func (f *Frame[Req, Res]) Claim(res Res, err error) bool {
	if !f.done.CompareAndSwap(false, true) {
		return false
	}
	f.env.CompleteAt(f.pos-1, res, err)
	return true
}

// RideFrame pushes a frame for h on e, for a stage that sends e itself on
// down the path as its first attempt (path holder only), and returns it;
// or nil, pushing nothing, when half of e's frames are taken already: the
// attempt then goes in an envelope of its own (NewChildOf), as every later
// one does, so that the stages below have as many frames as they would
// below an attempt's own envelope, nearly.
func RideFrame[Req, Res any](e *Envelope[Req, Res], h Hook[Req, Res]) *Frame[Req, Res] {
	if e.depth >= MaxFrames/2 {
		return nil
	}
	f, _ := e.Push(h)
	return f
}
