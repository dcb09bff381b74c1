package stagekit

import "github.com/troupe-go/troupe/internal/mailbox"

// Detach makes the leaf work of e's request, and of the attempts made from
// it (NewChild), run on a goroutine of its own instead of the caller's: an
// outcome forced on the path (a timeout firing) then reaches the caller at
// once, even while that work goes on. Until such work returns, the
// HoldUntilOutcome stages on the paths of the same caller keep their slots
// after the outcome has passed them, so work nobody waits for any more still
// counts against their limits. Path holder only.
func (e *Envelope[Req, Res]) Detach() { e.detached.Store(true); e.forcible = true }

// forced reports whether an outcome already passed one of the frames of e,
// or, for an attempt made from a request, one of the root's frames its
// outcome goes on through (rootDepth, taken with the Origin it was made
// from: the root itself may have gone on down the path since, with frames
// of its own attempt above those): nobody waits for e's work any more.
func (e *Envelope[Req, Res]) forced() bool {
	for i := range e.depth {
		if e.frames[i].done.Load() {
			return true
		}
	}
	if e.root != e {
		for i := range e.rootDepth {
			if e.root.frames[i].done.Load() {
				return true
			}
		}
	}
	return false
}

// workEnded counts the end of one leaf run; the last one frees the slots
// kept meanwhile. With keepSlot it is a Dekker pair on sequentially
// consistent atomics: workEnded stores running, then loads heldN; keepSlot
// stores heldN, then loads running; at least one of them sees the other's
// store, so a kept slot is always freed, by one of them, once.
func (c *callState[Req, Res]) workEnded() {
	if c.running.Add(-1) == 0 && c.heldN.Load() > 0 {
		c.freeHeld()
	}
}

// keepSlot reports whether a HoldUntilOutcome stage's slot in mb, whose
// outcome has passed, must stay taken because leaf work still runs for this
// caller; it is then freed when the last such work ends.
func (c *callState[Req, Res]) keepSlot(mb *mailbox.Mailbox) bool {
	if c.running.Load() == 0 {
		return false
	}
	return c.keep(mb.Free)
}

// keep runs release once the last leaf work running for this caller ends,
// and reports true; false (release not called) when none runs.
func (c *callState[Req, Res]) keep(release func()) bool {
	if c.running.Load() == 0 {
		return false
	}
	c.mu.Lock()
	c.held = append(c.held, release)
	c.heldN.Store(int32(len(c.held)))
	c.mu.Unlock()
	if c.running.Load() == 0 {
		c.freeHeld() // the work ended meanwhile and may not have seen it
	}
	return true
}

// KeepWhileWorkRuns is for a stage's frame hook that gives something back
// at the outcome (an adaptive limit's permit): when leaf work still runs
// for the caller of e's request although the outcome has passed (a timeout
// fired below, a hedge won beside it), release runs once that work has
// ended, and KeepWhileWorkRuns reports true; otherwise it reports false and
// release is not called (give back at once). The runtime does it for the
// slots of HoldUntilOutcome stages. Safe from any goroutine; release runs
// on the goroutine of the work that ends last and must not block.
//
// Ask WorkRuns first: it costs one atomic load, and spares making release
// for the outcomes (nearly all) that no running work follows.
func (e *Envelope[Req, Res]) KeepWhileWorkRuns(release func()) bool { return e.root.call.keep(release) }

// WorkRuns reports whether leaf work runs for the caller of e's request
// (see KeepWhileWorkRuns). Safe from any goroutine.
func (e *Envelope[Req, Res]) WorkRuns() bool { return e.root.call.running.Load() != 0 }

// freeHeld gives back what was kept, once each.
func (c *callState[Req, Res]) freeHeld() {
	c.mu.Lock()
	held := c.held
	c.held = nil
	c.heldN.Store(0)
	c.mu.Unlock()
	for _, release := range held {
		release()
	}
}
