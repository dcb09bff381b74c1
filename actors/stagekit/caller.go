package stagekit

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"

	"github.com/troupe-go/troupe/internal/ilist"
	"github.com/troupe-go/troupe/internal/mailbox"
)

// callState is the caller's side of a root envelope: the outcome once
// delivered, and the leaf work the caller must run meanwhile.
type callState[Req, Res any] struct {
	mu        sync.Mutex
	work      ilist.List[Envelope[Req, Res]] // envelopes to run, first come first; guarded by mu
	done      bool                           // outcome delivered; guarded by mu
	res       Res                            // guarded by mu
	err       error                          // guarded by mu
	abandoned error                          // the caller no longer waits (gave up, or has its outcome); guarded by mu
	sleeping  bool                           // the caller is blocked on wake; guarded by mu
	// gone: done or abandoned (1), set with them, read without mu
	// (Delivered). It changes with sync/atomic, except for the plain store
	// of reset, on a call state no one else holds.
	gone uint32
	wake chan struct{} // capacity 1; a token is sent only to a sleeping caller

	// Leaf work running for this caller, and the slots of HoldUntilOutcome
	// stages kept until none runs (see keepSlot).
	running atomic.Int32 // leaf runs under way
	heldN   atomic.Int32 // len(held), stored under mu
	held    []func()     // what is given back when no leaf work runs; guarded by mu

	// For Stage.ReserveAndCall: the request waits in the stage's line for a
	// slot, and the goroutine that frees one sends it (see slotGranted).
	slot   *mailbox.Waiter       // made once per pooled envelope
	target *stageInner[Req, Res] // the stage whose line it waits in; set by its caller

	// The stage the call entered by: it counts the callers that have not
	// returned (Stage.waiting) and abandons their work when it is closed
	// before they do. Set by newRoot, then read-only until reset.
	entry *Stage[Req, Res]

	// Work contexts for the leaf work this caller runs on its own
	// goroutine, carved from a slab it keeps (see workCtxSlab); owned by
	// the caller's goroutine, kept across pooled reuses.
	ctxs *workCtxSlab
	// The context of the leaf work the caller runs now, if any: when the
	// outcome is delivered meanwhile (a stage below the entry answered it
	// as it failed or closed), the work is told to stop, so that the
	// caller, busy in it, can return (see deliver): a work context made
	// for it, or the stage-made context it runs with as it is (see
	// WorkStopper). Guarded by mu.
	leafCtx WorkStopper
	// What to run once the leaf work the caller runs now returns (see
	// WhenLeafReturns); guarded by mu.
	onFree func()
	// inLeaf: the caller runs leaf work now (set with leafCtx, under mu;
	// cleared as the work returns, without it). freeSet: onFree may be set.
	// A Dekker pair (see WhenLeafReturns), so that a returning leaf takes
	// mu only when someone asked to hear of it.
	inLeaf, freeSet atomic.Bool
}

func (c *callState[Req, Res]) reset() {
	var zero Res
	c.work, c.done, c.res, c.err, c.abandoned = ilist.List[Envelope[Req, Res]]{}, false, zero, nil, nil
	c.target, c.entry, c.held, c.onFree = nil, nil, nil, nil
	c.inLeaf.Store(false)
	c.freeSet.Store(false)
	if c.heldN.Load() != 0 {
		c.heldN.Store(0)
	}
	c.gone = 0 // a plain store: see gone
}

// slotGranted is the outcome of a root envelope's wait in its stage's line
// (ReserveAndCall), on the goroutine that freed the slot or closed the stage:
// the request goes into the slot reserved for it, or is answered with the
// close error.
func (e *Envelope[Req, Res]) slotGranted(err error) {
	if err != nil {
		err = (*Stage[Req, Res])(e.call.target).Rejected(err)
		var zero Res
		e.Answer(zero, err)
		return
	}
	e.call.target.Send(e)
}

// pokeLocked wakes the caller if it sleeps. It must be called with mu held,
// right after the change the caller must see; the token is sent after
// unlocking (see unlockPoke).
func (c *callState[Req, Res]) pokeLocked() bool {
	if c.sleeping {
		c.sleeping = false
		return true
	}
	return false
}

func (c *callState[Req, Res]) unlockPoke(wake bool) {
	c.mu.Unlock()
	if wake {
		c.wake <- struct{}{}
	}
}

// deliver is the hook of a root envelope's first frame: it hands the final
// outcome to the waiting caller.
type deliver[Req, Res any] struct{}

// A caller whose context ended before its outcome came gets the context's
// error, whatever the outcome (a success of work that ignored its context,
// a fallback's value, a hedge's result): the outcome came too late.
func (deliver[Req, Res]) Complete(e *Envelope[Req, Res], f *Frame[Req, Res], out Outcome[Res]) Outcome[Res] {
	res, err := out.Res, out.Err
	if cerr := f.ctx.Err(); cerr != nil && (err == nil || !errors.Is(err, cerr)) {
		var zero Res
		res, err = zero, cerr
	}
	c := e.call
	c.mu.Lock()
	c.done, c.res, c.err = true, res, err
	if c.abandoned == nil {
		c.abandoned = ErrCallerGone // work handed to it from now on is answered at once
	}
	var wc WorkStopper
	if c.inLeaf.Load() {
		wc = c.leafCtx // the work still runs: this outcome is another's (it returned: its own)
	}
	// Last: once it sees gone, wait reads and writes the fields above
	// without mu (see delivered).
	atomic.StoreUint32(&c.gone, 1)
	c.unlockPoke(c.pokeLocked())
	if wc != nil {
		wc.StopWork(err)
	}
	return Outcome[Res]{Res: res, Err: err}
}

// leafReturned records that the leaf work the caller ran with wc (nil: a
// stage's context, see WorkStopper) returned its outcome: from now on that
// outcome is no longer another's to stop (deliver), and wc settles, so
// that only the caller's context ends it while the outcome is in use. It
// returns what WhenLeafReturns registered meanwhile, for the caller to run
// once the outcome has gone on (so that a stage told the caller is free
// sees the slots that work held freed already).
func (c *callState[Req, Res]) leafReturned(wc *workCtx) (free func()) {
	c.inLeaf.Store(false)
	if c.freeSet.Load() {
		c.mu.Lock()
		free = c.onFree
		c.onFree = nil
		c.freeSet.Store(false)
		c.mu.Unlock()
	}
	if wc != nil {
		wc.Settle()
	}
	return free
}

// rootPool makes root envelopes, each with its caller's side.
func rootPool[Req, Res any]() *sync.Pool {
	p := &sync.Pool{}
	p.New = func() any {
		e := &Envelope[Req, Res]{call: &callState[Req, Res]{wake: make(chan struct{}, 1)}}
		e.root = e
		e.call.slot = mailbox.NewWaiter(e.slotGranted)
		return e
	}
	return p
}

// newRoot returns a root envelope for a caller's request: references for the
// caller and for the path, and the delivery frame.
func newRoot[Req, Res any](s *Stage[Req, Res], ctx context.Context, req Req) *Envelope[Req, Res] {
	pool := s.roots
	e := pool.Get().(*Envelope[Req, Res])
	s.ent().waitingShard(e.call).Add(1)
	e.call.entry = s
	e.pool = pool
	e.Ctx, e.Req = ctx, req
	e.refs = 2 // a pooled envelope is ours alone: no fence (see Envelope.refs)
	e.frames[0].hook, e.frames[0].env, e.frames[0].ctx, e.frames[0].req = deliver[Req, Res]{}, e, ctx, req
	e.depth = 1
	return e
}

// HandToCaller is how a leaf service (one that makes the downstream call
// itself, like Func) implements Inner.Send: it queues l's call of e's
// request for the caller waiting on e to run, on its own goroutine. When
// that caller no longer waits (it gave up, or has its outcome already: a
// retry after a timeout above it), e is answered at once instead, with the
// caller's context error or ErrCallerGone.
func (e *Envelope[Req, Res]) HandToCaller(l Leaf[Req, Res]) {
	e.letGo()
	c := e.root.call
	c.mu.Lock()
	if err := c.abandoned; err != nil {
		c.mu.Unlock()
		dropLeaf(l)
		var zero Res
		e.Answer(zero, err)
		return
	}
	e.leaf = l
	if e.detached.Load() {
		c.running.Add(1) // before forced: a slot passed after it is kept
		c.mu.Unlock()
		if e.forced() {
			// An outcome was forced on its path meanwhile (a timeout
			// fired): the slots it passed were freed; start nothing.
			c.workEnded()
			e.leaf = nil
			dropLeaf(l)
			var zero Res
			e.Answer(zero, ErrCallerGone)
			return
		}
		go e.runDetached()
		return
	}
	c.work.Push(e, &e.queued)
	c.unlockPoke(c.pokeLocked())
}

func (c *callState[Req, Res]) popWork() *Envelope[Req, Res] {
	w := c.work.Front()
	if w != nil {
		c.work.Remove(&w.queued)
	}
	return w
}

// WhenLeafReturns arranges for f to run once the leaf work that the caller
// of e's request runs on its own goroutine right now returns, and reports
// true; when the caller runs none (or e's work runs on a goroutine of its
// own, see Detach), it reports false and f is not called. A
// stage that sends another attempt of a request calls it first (Retry), so
// that an attempt is not sent, with its deadline running, while the caller
// is still busy in the work of an earlier one that ignored its context. f
// runs on the caller's goroutine, as the work returns: it must not block.
// Safe from any goroutine.
func (e *Envelope[Req, Res]) WhenLeafReturns(f func()) bool {
	if e.detached.Load() {
		return false
	}
	c := e.root.call
	c.mu.Lock()
	defer c.mu.Unlock()
	// freeSet first, then inLeaf; leafReturned stores inLeaf, then loads
	// freeSet: one of the two sees the other's store, so a registration
	// made while the work runs is always taken by its return.
	c.freeSet.Store(true)
	if !c.inLeaf.Load() {
		if c.onFree == nil {
			c.freeSet.Store(false)
		}
		return false
	}
	if prev := c.onFree; prev != nil {
		next := f
		f = func() { prev(); next() }
	}
	c.onFree = f
	return true
}

// ErrCallerGone is the outcome of work handed to a caller that already has
// its outcome: a retry attempt sent after a timeout above it answered the
// caller, say. Nobody sees it but the stages below the answer.
var ErrCallerGone = errors.New("actors: the caller already has its outcome")

// Delivered reports whether the caller of e's request no longer waits for
// it: it has its outcome, or gave up. A stage that would go on working for
// the request (Retry) stops then.
func (e *Envelope[Req, Res]) Delivered() bool { return atomic.LoadUint32(&e.root.call.gone) != 0 }
