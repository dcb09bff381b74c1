package hedge

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/troupe-go/troupe/actors/stagekit"
	"github.com/troupe-go/troupe/internal/ilist"
)

// session is one request with its attempts: the original and its hedges.
// The stage holds the request (and its slot) until the session ends, once:
// the first final outcome, the last outcome when none was final, a failure
// of the stage, or the caller leaving while the original waited for a unit.
// Whoever ends it sets done and takes it out of the stage's lists at once,
// under b.mu; from then on no attempt is sent and every later outcome is
// discarded.
//
// Its state is guarded by the stage's mu, which also guards the lists it
// is in, so that the outcome that ends a session takes one lock. Until the
// original is sent, only the actor touches a session (no outcome can come,
// and whatever ends it runs on the actor), so sendOriginal sets running,
// sent, noMore and delay without the lock.
type session[Req, Res any] struct {
	b    *behavior[Req, Res]
	atts []attempt[Req, Res] // 1+maxHedges, made once per pooled session
	// refs counts the references: 1 until the session ends, +1 per attempt
	// in flight, in the pending list, in line. It changes with sync/atomic,
	// except that goLive stores it plainly.
	refs int32

	// Set by start on the actor, then read-only until the session is reused.
	gen    uint64                       // bumped at every reuse: stale messages are ignored
	parent *stagekit.Envelope[Req, Res] // the request; the original attempt rides it down the path
	origin stagekit.Origin[Req, Res]    // what the hedges are made from (the request itself changes below)
	req    Req
	ctx    context.Context // the request's context

	// The original rides the request (see sendOriginal): set by the actor
	// as it goes, then touched only through its methods until the session
	// is reused.
	ride stagekit.Ride[Req, Res]

	done    bool          // the session has its outcome; guarded by b.mu
	running int           // attempts sent whose outcome has not come; guarded by b.mu
	sent    int           // attempts sent, the original included; changed by the actor, under b.mu
	noMore  bool          // send no further hedge; guarded by b.mu
	queued  bool          // in b.line; guarded by b.mu
	delay   time.Duration // between attempts; set by the actor with the original

	unwatch func() bool // stops watching the request's context while the original waits; actor-owned

	live ilist.Links[session[Req, Res]] // in b.live; guarded by b.mu
	pend ilist.Links[session[Req, Res]] // in b.pending; guarded by b.mu
	due  time.Time                      // when the next hedge is due, while in b.pending; guarded by b.mu
}

// attempt is one send of the request: its hook and its context.
type attempt[Req, Res any] struct {
	ss   *session[Req, Res]
	n    int         // 0: the original; k: the k-th hedge
	sent time.Time   // set when sent
	ctx  *attemptCtx // nil when the session cannot hedge (the request's own context)
}

// start readies a pooled session for request e (actor). A pooled session
// went back with no reference: its own is taken as it goes live (see
// Request).
func (ss *session[Req, Res]) start(e *stagekit.Envelope[Req, Res]) {
	ss.gen++
	ss.parent, ss.req, ss.ctx, ss.origin = e, e.Req, e.Ctx, e.Origin()
	ss.done, ss.running, ss.sent, ss.noMore, ss.queued, ss.delay = false, 0, 0, false, false, 0
}

// isDone reports whether the session has its outcome.
func (ss *session[Req, Res]) isDone() bool {
	ss.b.mu.Lock()
	defer ss.b.mu.Unlock()
	return ss.done
}

// Complete is the hook of an attempt's first frame: the attempt's outcome,
// where it was produced. A success is a latency sample; the first final
// outcome ends the session, as does the last one when none was final.
// The user's Final runs without the lock, and not for an outcome that
// comes after the session ended (a loser's, discarded).
func (a *attempt[Req, Res]) Complete(_ *stagekit.Envelope[Req, Res], _ *stagekit.Frame[Req, Res], out stagekit.Outcome[Res]) stagekit.Outcome[Res] {
	res, err := out.Res, out.Err
	ss := a.ss
	b := ss.b
	if a.n == 0 && ss.ride.Riding() {
		return ss.originalDone(res, err)
	}
	res, err, final := a.judge(res, err)
	b.mu.Lock()
	if ss.done {
		b.mu.Unlock()
		ss.unref()
		return stagekit.Outcome[Res]{Res: res, Err: err} // a loser's late outcome: discarded
	}
	ss.running--
	if !final && ss.running > 0 {
		b.mu.Unlock() // another attempt may still do better
		ss.unref()
		return stagekit.Outcome[Res]{Res: res, Err: err}
	}
	ss.finish(a, res, err, 1)
	return stagekit.Outcome[Res]{Res: res, Err: err}
}

// judge records a success's latency and tells whether the outcome is
// final (the user's Final, whose panic is a final outcome of its own). It
// skips Final once the session has its outcome: the caller discards it.
func (a *attempt[Req, Res]) judge(res Res, err error) (Res, error, bool) {
	b := a.ss.b
	if err == nil && b.win != nil {
		now := b.clock.Now()
		b.win.record(now, now.Sub(a.sent))
	}
	if !b.cfg.userFinal || a.ss.isDone() {
		return res, err, succeeded(res, err) // the default Final, which cannot panic
	}
	final, perr := stagekit.Guard1("hedge: Final", func() (bool, error) { return b.cfg.final(res, err), nil })
	if perr != nil {
		var zero Res
		return zero, perr, true
	}
	return res, err, final
}

// originalDone is the original's outcome reaching the session's frame on
// the request: it goes on outward when it ends the session; it stops
// there (kept) while hedges may still do better, and the session passes
// its outcome on later; and when the session ended meanwhile without
// claiming the frame (it lost the race to this outcome), the session's
// outcome goes on in its place.
func (ss *session[Req, Res]) originalDone(res Res, err error) stagekit.Outcome[Res] {
	b := ss.b
	a := &ss.atts[0]
	if out, outErr, first := ss.ride.Arrived(); !first {
		ss.unref()                                          // the attempt's reference
		return stagekit.Outcome[Res]{Res: out, Err: outErr} // the session's own outcome, whose claim came too late
	}
	res, err, final := a.judge(res, err)
	b.mu.Lock()
	if ss.done {
		b.mu.Unlock()
		ss.unref()
		return stagekit.Outcome[Res]{Res: res, Err: err, Kept: true} // the session ended meanwhile: its end goes on from beneath the frame
	}
	ss.running--
	if !final && ss.running > 0 {
		b.mu.Unlock()
		ss.unref()
		return stagekit.Outcome[Res]{Res: res, Err: err, Kept: true} // another attempt may still do better
	}
	ss.finish(a, res, err, 1)
	return stagekit.Outcome[Res]{Res: res, Err: err}
}

// end ends the session with an outcome unless it has one already, and
// reports whether it did. winner is the attempt whose outcome it is, nil
// for an outcome of the stage's own.
func (ss *session[Req, Res]) end(winner *attempt[Req, Res], res Res, err error) bool {
	ss.b.mu.Lock()
	if ss.done {
		ss.b.mu.Unlock()
		return false
	}
	ss.finish(winner, res, err, 0)
	return true
}

// finish delivers the session's outcome, once. It is called with b.mu
// held and unlocks it: the session is marked done and leaves the live
// and pending lists (a hedge still due is forgotten at once); then the
// other attempts' contexts are cancelled (the winner's is only unlinked:
// its response may still need it), the slot is freed and the outcome goes
// on: the stage answers the request when the original was never sent;
// otherwise the outcome goes on from the session's frame, or, when it is
// the original's, its frame passes it on as finish returns. The session's
// references go with it: its own, the pending list's if it was listed,
// the original's when the outcome claims its frame, and held more, those
// of the caller (the winning attempt's).
func (ss *session[Req, Res]) finish(winner *attempt[Req, Res], res Res, err error, held int32) {
	b := ss.b
	ss.done = true
	sent, queued := ss.sent, ss.queued // no longer change
	riding := ss.ride.Riding()
	b.live.Remove(&ss.live)
	if ss.pend.Listed() {
		b.pending.remove(ss)
		held++
	}
	idle := b.live.Len() == 0
	b.mu.Unlock()
	if queued {
		b.st.PostControl(&unqueueMsg[Req, Res]{ss: ss, gen: ss.gen})
	}
	if winner != nil && winner.n > 0 {
		b.won.Add(1)
	}
	// The losers are told to stop before the caller hears the outcome, the
	// original last: told so, it may answer with its context's error and
	// reach the frame first, and then passes this outcome on in its place.
	for i := sent - 1; i >= 0; i-- {
		a := &ss.atts[i]
		switch {
		case a.ctx == nil:
		case a == winner:
			a.ctx.Settle()
		default:
			a.ctx.lost()
		}
	}
	switch {
	case !riding: // the original never rode the request: the stage holds it
		b.st.Respond(ss.parent, res, err)
	case winner == &ss.atts[0]: // the original's own outcome, passed on by its frame
		b.st.FreeSlot()
	default:
		b.st.FreeSlot()
		if ss.ride.End(res, err) {
			held++ // the original's outcome, discarded at the frame, drops no reference
		}
	}
	if idle {
		b.st.Recheck() // a draining stage may stop now
	}
	ss.drop(1 + held)
}

// goLive gives a session that goes live its first n references (actor).
// A plain store, with no fence: the session is the actor's alone until it
// goes into a list under b.mu or its attempt is sent, which hand it over,
// and the pool ordered its last drop before (as it orders the other
// fields start sets).
func (ss *session[Req, Res]) goLive(n int32) { ss.refs = n }

// ref adds n references.
func (ss *session[Req, Res]) ref(n int32) { atomic.AddInt32(&ss.refs, n) }

func (ss *session[Req, Res]) unref() { ss.drop(1) }

// drop drops n references; at none left, the session goes back to the pool.
func (ss *session[Req, Res]) drop(n int32) {
	if atomic.AddInt32(&ss.refs, -n) != 0 {
		return
	}
	var zero Req
	ss.ride.Release()
	ss.parent, ss.req, ss.ctx, ss.origin = nil, zero, nil, stagekit.Origin[Req, Res]{}
	for i := range ss.atts {
		ss.atts[i].ctx = nil
	}
	ss.b.sessions.Put(ss)
}

func (ss *session[Req, Res]) setQueued(q bool) {
	ss.b.mu.Lock()
	ss.queued = q
	ss.b.mu.Unlock()
}

// watch ends the session when the request's context ends while its
// original waits for a unit (actor): nothing else would notice.
func (ss *session[Req, Res]) watch() {
	if ss.unwatch != nil || ss.ctx.Done() == nil {
		return
	}
	msg := &cancelMsg[Req, Res]{ss: ss, gen: ss.gen}
	st := ss.b.st
	ss.unwatch = context.AfterFunc(ss.ctx, func() { st.PostControl(msg) })
}

func (ss *session[Req, Res]) stopWatch() {
	if ss.unwatch != nil {
		ss.unwatch()
		ss.unwatch = nil
	}
}
