package stagekit

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/troupe-go/troupe/internal/ilist"

	"github.com/troupe-go/troupe/internal/mailbox"
)

// MaxFrames is how many frames an envelope holds: the most response-path
// stages (limits, timeouts, retries, ...) one request can pass through.
const MaxFrames = 16

// ErrTooDeep is the outcome of a request that passes through more than
// MaxFrames stages that watch the response.
var ErrTooDeep = errors.New("actors: too many response-path stages for one request")

// Hook is a stage's part of the response path. Complete receives the outcome
// leaving the frames above f and returns the outcome to pass on outward, or
// one with Kept set when it takes the outcome over (the frames below then
// wait until the stage completes them itself, see Envelope.CompleteAt). It runs exactly
// once per frame, on whichever goroutine produced the outcome; it must not
// block. A Hook is usually the stage itself, shared by all its frames.
//
// Complete runs on whichever goroutine produced the outcome, for many requests at once: a Hook shared by a stage's frames must be safe for concurrent use.
//
// The envelope's Ctx belongs to its path holder, and may be a context a
// stage below made for the work (a Timeout's, a hedge attempt's): a hook
// reads the context its own stage was given from its frame (f.Context).
type Hook[Req, Res any] interface {
	Complete(e *Envelope[Req, Res], f *Frame[Req, Res], o Outcome[Res]) Outcome[Res]
}

// Outcome is a call's outcome on its way out along the response path.
//
// A plain value.
type Outcome[Res any] struct {
	Res Res
	Err error
	// Kept, in the outcome a Hook returns, says that the hook took the
	// outcome over: it goes no further now.
	Kept bool
}

// Frame is one stage's place on an envelope's response path. The fields
// Deadline and Aux, and the frame's place in a list (Links: the stage's
// calls in flight, say), belong to the stage that pushed the frame.
//
// A Frame belongs to its envelope: it is not safe for concurrent use, except that completing it is decided by one atomic operation.
type Frame[Req, Res any] struct {
	hook Hook[Req, Res]
	done atomic.Bool // set by whoever completes the frame, once
	// The envelope's flags when the frame was pushed (see Frame.Origin);
	// set by Push.
	detached, forcible, ctxClosed bool
	pos                           int                 // index in its envelope, set by Push
	env                           *Envelope[Req, Res] // its envelope, set by Push
	ctx                           context.Context     // the envelope's Ctx when the frame was pushed, set by Push
	req                           Req                 // the envelope's Req when the frame was pushed, set by Push
	// For the pushing stage.
	Deadline time.Time
	Aux      any
	ilist.Links[Frame[Req, Res]]
}

// Envelope carries one request (one attempt, under Retry) through the
// stages. The stage that holds it (the path holder) owns Ctx, Req and the
// frame stack; a stage that hands it on no longer touches them. Envelopes are
// pooled: a stage that keeps a pointer to one beyond its path holds a
// reference (Ref, Unref).
//
// An Envelope is not safe for concurrent use: its path holder owns it (see the package documentation); Ref, Unref and Delivered are safe from any goroutine.
type Envelope[Req, Res any] struct {
	Ctx context.Context
	Req Req

	frames [MaxFrames]Frame[Req, Res]
	depth  int // frames pushed; owned by the path holder

	root *Envelope[Req, Res] // the envelope of the waiting caller (itself for a root)
	// rootDepth: on an attempt made from a request (NewChildOf), how many
	// of the root's frames its outcome goes on through; set with root.
	rootDepth int
	call      *callState[Req, Res]            // the caller's side; set on roots only
	holder    atomic.Pointer[mailbox.Mailbox] // mailbox of the stage holding it, or nil
	// refs counts the path, registrations (and the caller and children, on
	// a root). It changes with sync/atomic, except for the plain store that
	// readies an envelope taken from its pool, which orders it after the
	// last user's (a store with a fence per request saved).
	refs    int32
	pool    *sync.Pool                      // where it goes back at zero refs
	leaf    Leaf[Req, Res]                  // set when handed to the caller to run
	queued  ilist.Links[Envelope[Req, Res]] // in its caller's work list (root.call.work); guarded by root.call.mu
	unwatch func() bool                     // stops a parked envelope's context watch
	obs     *Reporter                       // the innermost observed stage that accepted it, for EventStarted; owned by the path holder
	// detached: its leaf work runs on a goroutine of its own (Detach);
	// set by the path holder, read by a stage above that asks when the
	// caller's leaf work returns (WhenLeafReturns), on its own goroutine.
	detached atomic.Bool
	// ctxClosed: Ctx is cancelled by a stage on its path when that stage is
	// closed with the call running (SetCtx); owned by the path holder.
	ctxClosed bool
	// forcible: a stage on the path may answer it while its leaf work
	// still runs (ForcesOutcome); owned by the path holder.
	forcible bool
}

// letGo records that no stage holds e any more (the path holder hands it to
// its caller, answers it, or sends it to an inner service that is not a
// stage; a send to a stage records that stage instead, in sendFrom: NOTE
// handOn relies on it). The holder is read only when a stage fails;
// storing nil over nil would be the same as not storing, so the atomic
// store (a full fence on most machines) is made only when a stage is
// recorded.
func (e *Envelope[Req, Res]) letGo() {
	if e.holder.Load() != nil {
		e.holder.Store(nil)
	}
}

// Push puts a frame for h on top of e and returns it. The path holder calls
// it as the request goes down; it fails with ErrTooDeep when e is full.
func (e *Envelope[Req, Res]) Push(h Hook[Req, Res]) (*Frame[Req, Res], error) {
	if e.depth == MaxFrames {
		return nil, ErrTooDeep
	}
	f := &e.frames[e.depth]
	f.hook, f.pos, f.env, f.ctx, f.req = h, e.depth, e, e.Ctx, e.Req
	f.detached, f.forcible, f.ctxClosed = e.detached.Load(), e.forcible, e.ctxClosed
	e.depth++
	return f, nil
}

// Context returns the context the request had when f was pushed: the one
// the frame's stage was given, never one a stage below made for the work.
// A hook reads it rather than the envelope's Ctx: outcomes carry no
// context upward.
func (f *Frame[Req, Res]) Context() context.Context { return f.ctx }

// Request returns the request as it was when f was pushed: the one the
// frame's stage was given, whatever the stages below did to it since. A
// hook reads it rather than the envelope's Req, which the path holder
// below may be changing while an outcome is forced from above it (a
// Timeout's deadline).
func (f *Frame[Req, Res]) Request() Req { return f.req }

// Pos returns f's index in its envelope, for CompleteAt.
func (f *Frame[Req, Res]) Pos() int { return f.pos }

// Envelope returns the envelope f is on.
func (f *Frame[Req, Res]) Envelope() *Envelope[Req, Res] { return f.env }

// Depth is the number of frames pushed so far.
func (e *Envelope[Req, Res]) Depth() int { return e.depth }

// Answer ends e's path with an outcome: it completes e's frames from the
// top, then drops the path's reference. Only the path holder calls it, once.
func (e *Envelope[Req, Res]) Answer(res Res, err error) {
	e.letGo()
	e.CompleteAt(e.depth-1, res, err)
	e.Unref()
}

// CompleteAt completes frames i, i-1, ..., 0 of e with an outcome, stopping at
// a frame completed before (that outcome is then discarded: it came too late)
// or at a hook that keeps it. A stage that forces an outcome (a timeout
// firing) or that kept one (Retry) calls it with its own frame's index; it
// must hold a reference on e meanwhile.
func (e *Envelope[Req, Res]) CompleteAt(i int, res Res, err error) {
	for ; i >= 0; i-- {
		f := &e.frames[i]
		if !f.done.CompareAndSwap(false, true) {
			return
		}
		o := f.hook.Complete(e, f, Outcome[Res]{Res: res, Err: err})
		if o.Kept {
			return
		}
		res, err = o.Res, o.Err
	}
}

// Done reports whether f was completed.
func (f *Frame[Req, Res]) Done() bool { return f.done.Load() }

// Ref adds a reference to e: its holder keeps it from being reused.
func (e *Envelope[Req, Res]) Ref() { atomic.AddInt32(&e.refs, 1) }

// Unref drops a reference; the last one returns e to its pool.
func (e *Envelope[Req, Res]) Unref() {
	if n := atomic.AddInt32(&e.refs, -1); n > 0 {
		return
	} else if n < 0 {
		invariant("envelope released more often than referenced")
		return
	}
	root := e.root
	if e.call != nil {
		e.call.reset()
	}
	e.reset()
	if e.pool != nil {
		e.pool.Put(e)
	}
	if root != e {
		root.Unref()
	}
}

func (e *Envelope[Req, Res]) reset() {
	var zero Req
	e.Ctx, e.Req = nil, zero
	for i := range e.depth {
		e.frames[i] = Frame[Req, Res]{}
	}
	e.depth = 0
	if e.call == nil {
		e.root = nil
	}
	e.leaf, e.unwatch, e.obs = nil, nil, nil
	e.detached.Store(false)
	e.ctxClosed, e.forcible = false, false
	e.letGo()
}

// NewChild returns an envelope for one attempt of parent's request (Retry's
// attempts): it reports to the same caller, runs its leaf work on the
// caller's goroutine, and starts with one frame, for h. It holds a reference
// on parent's root until it is reused. pool must hand out *Envelope values
// made by NewPool.
func NewChild[Req, Res any](pool *sync.Pool, parent *Envelope[Req, Res], ctx context.Context, req Req, h Hook[Req, Res]) *Envelope[Req, Res] {
	o := parent.Origin()
	return NewChildOf(pool, &o, ctx, req, h)
}

// NewPool returns a pool of envelopes for NewChild.
func NewPool[Req, Res any]() *sync.Pool {
	return &sync.Pool{New: func() any { return new(Envelope[Req, Res]) }}
}

// SetCtx replaces the context e's request carries below the path holder
// (path holder only). cancelledOnClose says that the stage making it
// cancels it itself, with its *troupe.ClosedError, when it is closed while
// the call still runs (Timeout's contexts): the work then runs with it as
// it is, and the stage the call entered by does not wrap it again (see
// workCtx), which saves an allocation per call.
func (e *Envelope[Req, Res]) SetCtx(ctx context.Context, cancelledOnClose bool) {
	e.Ctx, e.ctxClosed = ctx, cancelledOnClose
}

// ForcesOutcome says that a stage on e's path may answer e while its leaf
// work still runs (a timeout that fires): while that work runs, the
// HoldUntilOutcome stages the forced outcome passes keep their slots, so
// work nobody waits for still counts against their limits. Path holder
// only; the attempts made from e (NewChild) inherit it.
func (e *Envelope[Req, Res]) ForcesOutcome() { e.forcible = true }
