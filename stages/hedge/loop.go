package hedge

import (
	"time"

	"github.com/troupe-go/troupe/actors/stagekit"
)

// Control messages of the stage.
type (
	// tickMsg: the alarm fired; some hedges may be due.
	tickMsg struct{}
	// grantMsg: the inner service granted a unit, or failed.
	grantMsg struct{ err error }
	// cancelMsg: a request's context ended while its original waited for a unit.
	cancelMsg[Req, Res any] struct {
		ss  *session[Req, Res]
		gen uint64
	}
	// unqueueMsg: a session ended while in line for a unit.
	unqueueMsg[Req, Res any] struct {
		ss  *session[Req, Res]
		gen uint64
	}
)

// Control handles the stage's own messages (actor).
func (b *behavior[Req, Res]) Control(_ *stagekit.Stage[Req, Res], msg any) {
	switch m := msg.(type) {
	case tickMsg:
		b.tick()
	case *grantMsg:
		b.line.Granted(b.st, b, m.err)
	case *cancelMsg[Req, Res]:
		if m.ss.gen == m.gen && b.unqueue(m.ss) {
			m.ss.end(nil, *new(Res), m.ss.ctx.Err())
		}
	case *unqueueMsg[Req, Res]:
		if m.ss.gen == m.gen {
			b.unqueue(m.ss)
		}
	}
}

// tick sends the hedges that are due, then sets the alarm for the next.
// A session taken out of the pending list here brings the list's
// reference with it; one that ended meanwhile has left the list already.
func (b *behavior[Req, Res]) tick() {
	b.alarm.Fired()
	b.alarmAt = time.Time{}
	now := b.clock.Now()
	for {
		b.mu.Lock()
		ss := b.pending.popDue(now)
		if ss == nil {
			var next time.Time
			if first := b.pending.first(); first != nil {
				next = first.due
			}
			b.mu.Unlock()
			if !next.IsZero() {
				b.setAlarm(next)
			}
			return
		}
		b.mu.Unlock()
		b.hedgeDue(ss)
		ss.unref() // the pending list's reference
	}
}

// setAlarm arms the alarm for at unless it is armed for an earlier or
// equal time already (actor). The actor keeps the time it armed it for,
// so that a request whose hedge goes first behind an earlier one that
// ended (the list was empty) leaves the alarm alone, as Set would, without
// taking its lock: the alarm fires for nothing, and tick sets it again.
func (b *behavior[Req, Res]) setAlarm(at time.Time) {
	if !b.alarmAt.IsZero() && !at.Before(b.alarmAt) {
		return
	}
	b.alarmAt = at
	b.alarm.Set(at)
}

// hedgeDue asks for a unit for ss's next hedge, unless the session needs
// none: it ended, nobody waits for it, or the budget affords no hedge.
func (b *behavior[Req, Res]) hedgeDue(ss *session[Req, Res]) {
	b.mu.Lock()
	stop := ss.done || ss.noMore
	if !stop && (ss.parent.Delivered() || ss.ctx.Err() != nil) {
		ss.noMore, stop = true, true
	}
	if !stop && b.cfg.budget != nil && b.cfg.budget.Remaining() == 0 {
		ss.noMore, stop = true, true
		b.refused.Add(1)
	}
	b.mu.Unlock()
	if !stop {
		b.wantUnit(ss)
	}
}

// wantUnit reserves an inner unit for ss's next hedge, through the inner
// service's readiness path: at once when it is ready and nobody is in
// line, otherwise in line (see queue). Request does the same for the
// original.
func (b *behavior[Req, Res]) wantUnit(ss *session[Req, Res]) {
	if b.line.Len() == 0 {
		ok, err := b.st.Inner().TryReserve()
		if err != nil {
			b.broken(ss, err)
			return
		}
		if ok {
			ss.sendHedge()
			return
		}
	}
	b.queue(ss)
}

// queue puts ss in line for an inner unit: first come, first served, and
// while anyone is in line the stage takes no new request.
func (b *behavior[Req, Res]) queue(ss *session[Req, Res]) {
	ss.ref(1) // the line's reference
	ss.setQueued(true)
	if ss.sent == 0 {
		ss.watch()
	}
	b.line.Push(b.st, b, ss)
}

// spend sends ss's next attempt with the unit just reserved.
func (b *behavior[Req, Res]) spend(ss *session[Req, Res]) {
	if ss.sent == 0 {
		ss.sendOriginal(b.clock.Now(), false)
	} else {
		ss.sendHedge()
	}
}

// SpendUnit sends ss's next attempt with the unit the line won for it
// (line.Owner), and drops the line's reference.
func (b *behavior[Req, Res]) SpendUnit(ss *session[Req, Res]) {
	b.spend(ss)
	ss.unref() // the line's reference
}

// InnerBroken ends the first in line, if any, with the inner service's
// readiness error (line.Owner).
func (b *behavior[Req, Res]) InnerBroken(ss *session[Req, Res], ok bool, err error) {
	if !ok {
		b.broken(nil, err)
		return
	}
	b.broken(ss, err)
	ss.unref() // the line's reference
}

// Unneeded reports that ss, reaching the front of the line, needs no unit
// any more: it ended, or it sends no more hedges (line.Owner). Either way
// it is out of the line now.
func (b *behavior[Req, Res]) Unneeded(ss *session[Req, Res]) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	ss.queued = false
	return ss.done || (ss.sent > 0 && ss.noMore)
}

// LeftLine drops the line's reference of a session that needed no unit
// (line.Owner).
func (b *behavior[Req, Res]) LeftLine(ss *session[Req, Res]) { ss.unref() }

// unqueue takes ss out of the line, if it is there, and reports whether
// it was (actor).
func (b *behavior[Req, Res]) unqueue(ss *session[Req, Res]) bool {
	if !b.line.Remove(b.st, ss) {
		return false
	}
	ss.stopWatch()
	ss.setQueued(false)
	ss.unref() // the line's reference
	return true
}

// broken ends ss with the inner service's readiness error itself, unless
// its original went already (its attempts end it), and closes the stage:
// the inner service is broken. The stage closes first, so that a caller
// who hears err and reserves again is refused.
func (b *behavior[Req, Res]) broken(ss *session[Req, Res], err error) {
	b.breaking, b.breakErr = ss, err
	b.st.Break(err)
	b.breaking, b.breakErr = nil, nil
	if ss == nil {
		return
	}
	if ss.sent > 0 { // a hedge that cannot go
		b.mu.Lock()
		ss.noMore = true
		b.mu.Unlock()
		return
	}
	ss.end(nil, *new(Res), err) // the stage was broken already: Fail did not run
}
