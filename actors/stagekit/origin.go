package stagekit

import (
	"context"
	"sync"
	"sync/atomic"
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
	return Origin[Req, Res]{root: e.root, rootDepth: depth, ctx: e.Ctx, detached: e.detached.Load(), forcible: e.forcible, ctxClosed: e.ctxClosed}
}

// Origin returns the origin of f's request as it was when f was pushed:
// what an attempt a hook makes for the request needs (a fallback's run),
// which the stages below f may have changed since (a Timeout in Abandon
// mode detaches the work below it; the fallback's own work must not be).
// The attempt's outcome goes on through the frames outside f. Use it while
// holding a reference on f's envelope.
func (f *Frame[Req, Res]) Origin() Origin[Req, Res] {
	e := f.env
	depth := e.rootDepth
	if e.root == e {
		depth = f.pos
	}
	return Origin[Req, Res]{root: e.root, rootDepth: depth, ctx: f.ctx, detached: f.detached, forcible: f.forcible, ctxClosed: f.ctxClosed}
}

// NewChildOf is NewChild from the origin of the parent request: the
// attempt reports to the same caller and runs its leaf work the same way.
func NewChildOf[Req, Res any](pool *sync.Pool, o *Origin[Req, Res], ctx context.Context, req Req, h Hook[Req, Res]) *Envelope[Req, Res] {
	e := pool.Get().(*Envelope[Req, Res])
	e.pool = pool
	e.root, e.rootDepth = o.root, o.rootDepth
	e.root.Ref()
	e.detached.Store(o.detached)
	e.forcible = o.forcible
	e.ctxClosed = o.ctxClosed && ctx == o.ctx
	e.Ctx, e.Req = ctx, req
	e.refs = 1 // a pooled envelope is ours alone: no fence (see Envelope.refs)
	e.frames[0].hook, e.frames[0].env, e.frames[0].ctx, e.frames[0].req = h, e, ctx, req
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

// Ride is a stage's hold on a request it sent on down the path itself,
// with a frame of its own on top, as its first attempt (Retry's, Hedge's),
// while it may still end the request with an outcome of its own (a later
// attempt's, or its failing): which of the two reaches the frame first,
// and the reference on the request the stage keeps meanwhile. One
// CompareAndSwap decides the race, so that exactly one outcome goes on.
// The zero value is ready; Start begins a ride, Release ends it.
//
// Start and Release belong to the stage (Start on its actor, holding the
// request; Release once neither side will touch the ride again); Arrived
// (the frame's hook) and End may run on any goroutine, once each.
type Ride[Req, Res any] struct {
	frame *Frame[Req, Res]
	at    int32 // rideOpen, rideArrived or rideClaimed; by CompareAndSwap
	// The stage's own outcome, written by End before it sets rideClaimed,
	// read by Arrived only after it saw rideClaimed.
	res Res
	err error
}

// Who reached a ride's frame first (Ride.at).
const (
	rideOpen    int32 = iota
	rideArrived       // the path's outcome
	rideClaimed       // the stage's own, through End
)

// Start pushes a frame for h on e and takes a reference on e for the ride
// (path holder), then the stage sends e on; it reports false, doing
// nothing, when half of e's frames are taken already: the attempt then
// goes in an envelope of its own (NewChildOf), as every later one does, so
// that the stages below have nearly the frames they would have below an
// attempt's own envelope.
func (r *Ride[Req, Res]) Start(e *Envelope[Req, Res], h Hook[Req, Res]) bool {
	if e.depth >= MaxFrames/2 {
		return false
	}
	r.frame, _ = e.Push(h)
	e.Ref()
	return true
}

// Riding reports whether Start began a ride (and Release has not ended it).
func (r *Ride[Req, Res]) Riding() bool { return r.frame != nil }

// Arrived is for the frame's hook, as the path's outcome reaches the frame.
// It reports true when that outcome came first: the hook decides what
// becomes of it, and a later End goes on from beneath the frame. It
// reports false when End claimed the frame first: res and err are then
// the stage's own outcome, for the hook to pass on in the path's place.
func (r *Ride[Req, Res]) Arrived() (res Res, err error, first bool) {
	if atomic.CompareAndSwapInt32(&r.at, rideOpen, rideArrived) {
		return res, err, true
	}
	return r.res, r.err, false
}

// End sends the stage's own outcome on from the frame: from beneath it
// when the path's outcome stopped there (its hook kept it), or by
// claiming the frame. It reports true when the path's outcome will be
// discarded at the frame, its hook never running (the stage drops what
// that hook would have dropped).
func (r *Ride[Req, Res]) End(res Res, err error) (discarded bool) {
	r.res, r.err = res, err
	if !atomic.CompareAndSwapInt32(&r.at, rideOpen, rideClaimed) {
		r.frame.env.CompleteAt(r.frame.pos-1, res, err)
		return false
	}
	// Claimed, unless the path's outcome took the frame at this instant:
	// its hook then sees rideClaimed and passes this outcome on.
	return r.frame.Claim(res, err)
}

// Release ends the ride: it drops the ride's reference on the request and
// readies r for another.
func (r *Ride[Req, Res]) Release() {
	if r.frame == nil {
		return
	}
	e := r.frame.env
	*r = Ride[Req, Res]{}
	e.Unref()
}
