package retry

import (
	"time"

	"github.com/troupe-go/troupe/actors/stagekit"
)

// Control messages of the session loop.
type (
	// waitMsg: the policy said retry after w (Called -> Waiting).
	waitMsg[Req, Res, T any, P policyPtr[Req, Res, T]] struct {
		ss  *session[Req, Res, T, P]
		gen uint64
		w   Wait
	}
	// readyMsg: a session's gate opened (Waiting -> Retrying).
	readyMsg[Req, Res, T any, P policyPtr[Req, Res, T]] struct {
		ss  *session[Req, Res, T, P]
		gen uint64
	}
	// cancelMsg: a waiting session's context ended.
	cancelMsg[Req, Res, T any, P policyPtr[Req, Res, T]] struct {
		ss  *session[Req, Res, T, P]
		gen uint64
	}
	// freeMsg: the caller's goroutine returned from the work of an earlier
	// attempt (Retrying, again).
	freeMsg[Req, Res, T any, P policyPtr[Req, Res, T]] struct {
		ss  *session[Req, Res, T, P]
		gen uint64
	}
	// tickMsg: the alarm fired (Waiting -> Retrying for those due).
	tickMsg struct{}
	// grantMsg: the inner service granted a unit, or failed.
	grantMsg struct{ err error }
)

// Control runs the session loop's transitions (actor).
func (b *behavior[Req, Res, T, P]) Control(_ *stagekit.Stage[Req, Res], msg any) {
	switch m := msg.(type) {
	case *waitMsg[Req, Res, T, P]:
		if m.ss.current(waiting, m.gen) {
			b.wait(m.ss, m.w)
		}
	case *readyMsg[Req, Res, T, P]:
		if m.ss.current(waiting, m.gen) && m.ss.idx < 0 {
			b.retrying(m.ss)
		}
	case *freeMsg[Req, Res, T, P]:
		ss := m.ss
		if ss.current(retrying, m.gen) {
			b.retrying(ss)
		}
		ss.unref() // the registration's (see untilLeafReturns)
	case *cancelMsg[Req, Res, T, P]:
		b.cancel(m.ss, m.gen)
	case tickMsg:
		b.tick()
	case *grantMsg:
		b.line.Granted(b.st, b, m.err)
	}
}

// current reports whether ss is in state for the use that numbered a
// message gen (actor). The state is read first: a sender reusing the
// session (the caller's path) bumps gen before it sets the state, so a
// state of the new use read here comes with its gen, and a stale message
// is ignored.
func (ss *session[Req, Res, T, P]) current(state int32, gen uint64) bool {
	return ss.state.Load() == state && ss.gen.Load() == gen
}

// wait starts the policy's wait for ss (Waiting). The session's context is
// watched meanwhile: when it ends, so does the wait. A retry without a wait
// goes on at once, unwatched: retrying looks at the context itself, and
// watches it only if the session must wait for a unit (asking a context
// for Done may allocate, and the watch does).
func (b *behavior[Req, Res, T, P]) wait(ss *session[Req, Res, T, P], w Wait) {
	switch {
	case b.st.Broken():
		b.retrying(ss) // no attempt can go: the session ends now, with the readiness error
	case w.Gate != nil:
		ss.watch()
		stop := make(chan struct{})
		ss.gate = stop
		msg := &readyMsg[Req, Res, T, P]{ss: ss, gen: ss.gen.Load()}
		go func(gate <-chan struct{}) {
			select {
			case <-gate:
				b.st.PostControl(msg)
			case <-stop:
			}
		}(w.Gate)
	case w.Delay > 0:
		ss.watch()
		ss.due = time.Now().Add(w.Delay)
		b.waitSeq++
		ss.waitSeq = b.waitSeq
		b.waits.Push(ss)
		b.alarm.Set(b.waits.Min().due)
	default:
		b.retrying(ss)
	}
}

// tick moves the sessions whose wait is over to Retrying.
func (b *behavior[Req, Res, T, P]) tick() {
	b.alarm.Fired()
	now := time.Now()
	for b.waits.Len() > 0 && !b.waits.Min().due.After(now) {
		b.retrying(b.waits.Remove(0))
	}
	if b.waits.Len() > 0 {
		b.alarm.Set(b.waits.Min().due)
	}
}

// retrying re-reserves the inner service for ss's next attempt, through
// the normal readiness path; a session's first attempt comes here too.
// Sessions waiting for a unit are served first in line, and while any waits
// the stage takes no new request.
func (b *behavior[Req, Res, T, P]) retrying(ss *session[Req, Res, T, P]) {
	if ss.state.Load() != retrying && !ss.state.CompareAndSwap(waiting, retrying) {
		return
	}
	if ss.sent > 0 {
		// Nobody waits for another attempt: a caller whose context ended
		// gets its context's error, as it would from its own wait.
		if err := ss.ctx.Err(); err != nil {
			var zero Res
			ss.finish(zero, err)
			return
		}
		if ss.parent.Delivered() {
			var zero Res
			ss.finish(zero, ErrSessionOver)
			return
		}
		// The caller still runs the work of an earlier attempt (one that
		// ignored its context past a timeout below): the next attempt goes
		// once it returns, so that its time starts when it can run.
		if ss.untilLeafReturns() {
			return
		}
	}
	if b.line.Len() == 0 {
		ok, err := b.st.Inner().TryReserve()
		if err != nil {
			b.broken(ss, err)
			return
		}
		if ok {
			ss.send()
			return
		}
	}
	ss.watch()
	b.line.Push(b.st, b, ss)
}

// SpendUnit sends ss with the unit the line won for it (line.Owner).
func (b *behavior[Req, Res, T, P]) SpendUnit(ss *session[Req, Res, T, P]) { ss.send() }

// InnerBroken ends the first in line, if any, with the inner service's
// readiness error (line.Owner).
func (b *behavior[Req, Res, T, P]) InnerBroken(ss *session[Req, Res, T, P], ok bool, err error) {
	if !ok {
		ss = nil
	}
	b.broken(ss, err)
}

// Unneeded reports false: a session leaves the line only by cancel
// (line.Owner).
func (b *behavior[Req, Res, T, P]) Unneeded(*session[Req, Res, T, P]) bool { return false }

// LeftLine is never called: every session in line needs its unit
// (line.Owner).
func (b *behavior[Req, Res, T, P]) LeftLine(*session[Req, Res, T, P]) {}

// broken ends ss with the inner service's readiness error itself, without
// asking the policy, and closes the stage: the inner service is broken.
// The stage closes first, so that a caller who hears err and reserves again
// is refused (Fail answers ss with err itself, not with the closed error).
func (b *behavior[Req, Res, T, P]) broken(ss *session[Req, Res, T, P], err error) {
	b.breaking = &breaking[Req, Res, T, P]{ss: ss, err: err}
	b.st.Break(err)
	b.breaking = nil
	if ss != nil { // the stage was closed already: Fail did not run
		var zero Res
		ss.finish(zero, err)
	}
}

// cancel ends a session whose context ended while it waited, or waited for
// a unit.
func (b *behavior[Req, Res, T, P]) cancel(ss *session[Req, Res, T, P], gen uint64) {
	if !ss.current(waiting, gen) && !ss.current(retrying, gen) {
		return
	}
	if ss.idx >= 0 {
		b.waits.Remove(ss.idx)
	}
	b.line.Remove(b.st, ss)
	var zero Res
	ss.finish(zero, ss.ctx.Err())
}
