package adaptive

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors/stagekit"
)

// Complete is the hook of the stage's frames: the outcome of a call the
// stage handed on. It runs where the outcome was produced, for many calls
// at once. It measures the call, moves the limit, gives the call's slot
// back (or keeps it, see slots), and has the actor hand on what waits.
// When the call's context carries a Hold that keeps the outcome (see
// stagekit.WithHold: a response whose body still streams), the call's
// latency is measured now, and the rest waits for the Hold's release: the
// call counts as in flight, and keeps its slot, until then. So it does while
// the caller's work still runs after an outcome was forced past it (a
// timeout fired below, a hedge won), as a Limit's slot does.
func (b *behavior[Req, Res]) Complete(e *stagekit.Envelope[Req, Res], f *stagekit.Frame[Req, Res], out stagekit.Outcome[Res]) stagekit.Outcome[Res] {
	res, err := out.Res, out.Err
	c := f.Aux.(*call)
	f.Aux = nil
	now := b.clock.Now()
	rtt := now.Sub(c.start)
	k, perr := b.judge(c.ctx, err)
	ep := c.epoch
	*c = call{}
	b.calls.Put(c)

	if h := stagekit.HoldFor(f.Context(), res, err); perr == nil && h != nil && h.Keep(func() { b.released(ep, rtt, k) }) {
		return stagekit.Outcome[Res]{Res: res, Err: err}
	}
	if perr == nil && e.WorkRuns() && e.KeepWhileWorkRuns(func() { b.released(ep, rtt, k) }) {
		return stagekit.Outcome[Res]{Res: res, Err: err} // the work still runs below (an outcome forced past it): it counts until it ends
	}
	if terr := b.settle(ep, now, rtt, k); terr != nil && perr == nil {
		perr = terr
	}
	if perr != nil {
		var zero Res
		if err != nil {
			return stagekit.Outcome[Res]{Res: zero, Err: fmt.Errorf("adaptive: %w (the call's error: %w)", perr, err)}
		}
		return stagekit.Outcome[Res]{Res: zero, Err: fmt.Errorf("adaptive: %w", perr)}
	}
	return stagekit.Outcome[Res]{Res: res, Err: err}
}

// released settles a call whose outcome a Hold kept, when the Hold is
// released (on the goroutine that releases it). No call waits for its
// outcome any more: a panic of OnLimitChange is logged.
func (b *behavior[Req, Res]) released(ep uint64, rtt time.Duration, k kind) {
	if err := b.settle(ep, b.clock.Now(), rtt, k); err != nil && b.log != nil {
		b.log.Error("adaptive: OnLimitChange panicked", "stage", b.st.Name(), "err", err)
	}
}

// settle ends a call of epoch ep that took rtt and was judged k, at now:
// the limit moves, the call's slot goes back (or is kept, see slots), and
// the actor hands on what waits. It returns the first panic of
// OnLimitChange or the observer.
func (b *behavior[Req, Res]) settle(ep uint64, now time.Time, rtt time.Duration, k kind) error {
	b.mu.Lock()
	g0 := b.lim.gate
	old, cur := b.lim.done(ep, now, rtt, k)
	switch {
	case cur != old && (b.onChange != nil || b.rep != nil):
		b.pending = append(b.pending, change{old, cur}) // an increase opens the gate once told
	case cur > old:
		b.lim.raise(cur)
	}
	free := b.moveGate(g0)
	kept := b.sl.keep()
	b.mu.Unlock()

	if !kept {
		b.st.GiveSlot()
	}
	b.freeHeld(free)
	if cur < old {
		b.takeBack()
	}
	var perr error
	if cur != old && (b.onChange != nil || b.rep != nil) {
		perr = b.tellChanges()
	}
	if b.waiting.Load() > 0 {
		b.st.PostControl(pumpMsg{})
	}
	return perr
}

// judge says what an outcome tells about the service inside: a success is
// a latency sample; an error is ignored when the caller cancelled the call
// (or the call never ran, its caller having its outcome already), and is
// otherwise a drop, unless Classify says it is not (then it is a sample).
func (b *behavior[Req, Res]) judge(ctx context.Context, err error) (kind, error) {
	switch {
	case err == nil:
		return sample, nil
	case errors.Is(ctx.Err(), context.Canceled), errors.Is(err, stagekit.ErrCallerGone):
		return ignored, nil
	case b.classify == nil:
		return drop, nil
	}
	over, perr := stagekit.Guard1("adaptive: Classify", func() (bool, error) { return b.classify(err), nil })
	switch {
	case perr != nil:
		return ignored, perr
	case over:
		return drop, nil
	}
	return sample, nil
}

// moveGate accounts for the gate having moved from g0 (under mu), and
// returns how many held slots to free.
func (b *behavior[Req, Res]) moveGate(g0 int) int {
	g := b.lim.gate
	b.gate.Store(int64(g))
	switch {
	case g < g0:
		b.sl.close(g0 - g)
	case g > g0:
		return b.sl.open(g - g0)
	}
	return 0
}

// freeHeld frees n of the slots the stage holds: the first callers in line
// get them.
func (b *behavior[Req, Res]) freeHeld(n int) {
	for range n {
		b.st.GiveSlot()
	}
}

// release gives back the slot of a request leaving the stage, unless the
// stage keeps it to pay what it owes.
func (b *behavior[Req, Res]) release() {
	b.mu.Lock()
	kept := b.sl.keep()
	b.mu.Unlock()
	if !kept {
		b.st.GiveSlot()
	}
}

// takeBack takes free slots for what the stage owes, while nobody waits
// for them (anywhere).
func (b *behavior[Req, Res]) takeBack() {
	for {
		b.mu.Lock()
		ok := b.sl.take()
		b.mu.Unlock()
		if !ok {
			return
		}
		if got, _ := b.st.TakeSlot(); !got {
			b.mu.Lock()
			b.sl.untake()
			b.mu.Unlock()
			return
		}
	}
}

// tellChanges tells onChange of the pending changes, in order, then opens
// the gate as far as they went. One goroutine tells at a time; a goroutine that
// finds another telling leaves its changes to it (toldMore makes sure they
// are not left behind). It returns the first panic of onChange, as the
// outcome of the call whose goroutine told it.
func (b *behavior[Req, Res]) tellChanges() error {
	b.toldMore.Store(true)
	var perr error
	for b.toldMore.Load() && b.tell.TryLock() {
		b.toldMore.Store(false)
		for {
			b.mu.Lock()
			batch := b.pending
			b.pending = nil
			b.mu.Unlock()
			if len(batch) == 0 {
				break
			}
			for _, ch := range batch {
				if b.onChange != nil {
					if err := stagekit.Guard("adaptive: OnLimitChange", func() { b.onChange(ch.old, ch.new) }); err != nil && perr == nil {
						perr = err
					}
				}
				if b.rep != nil {
					if err := b.rep.Report(troupe.Event{Type: troupe.EventLimitChanged, Limit: ch.new}); err != nil && perr == nil {
						perr = err
					}
				}
			}
			// Opened only now, to where the batch ended: never above a
			// value onChange has not been told yet.
			b.open(batch[len(batch)-1].new)
		}
		b.tell.Unlock()
	}
	return perr
}

// open opens the gate up to to, once an increase has been told.
func (b *behavior[Req, Res]) open(to int) {
	b.mu.Lock()
	g0 := b.lim.gate
	opened := b.lim.raise(to) > 0
	free := b.moveGate(g0)
	b.mu.Unlock()
	b.freeHeld(free)
	if opened && b.waiting.Load() > 0 {
		b.st.PostControl(pumpMsg{})
	}
}
