package retry

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors/stagekit"
	"github.com/troupe-go/troupe/internal/ilist"
)

// Session states.
const (
	running  int32 = iota // an attempt is in flight
	waiting               // the policy said retry; the wait has not ended
	retrying              // the wait ended; the session needs an inner unit
	done                  // the session has its outcome
)

// session is one request with all its attempts. Who may touch it follows
// its state: the actor in waiting and retrying, the goroutine completing its
// attempt in running; the state changes by CompareAndSwap, so an outcome
// and a Fail racing for a session settle it once.
type session[Req, Res, T any, P policyPtr[Req, Res, T]] struct {
	b      *behavior[Req, Res, T, P]
	parent *stagekit.Envelope[Req, Res] // the request; its first attempt rides it down the path
	ctx    context.Context              // the request's context as the stage got it (below, the request's changes)
	origin stagekit.Origin[Req, Res]    // the later attempts are made from it
	pol    T                            // this session's copy of the policy
	fault  error                        // a panic of pol's Copy when bound (an Attempts), until taken (takeFault)
	req    Req                          // the copy for the next attempt
	again  bool                         // req is a copy: the outcome goes to the policy
	res    Res                          // the attempt's outcome, while the policy judges it:
	err    error                        // fields, so that handing their addresses costs no allocation
	state  atomic.Int32
	refs   atomic.Int32  // 1 while in flight, +1 per attempt whose outcome is pending
	gen    atomic.Uint64 // bumped at every reuse (before state is set), so stale messages are ignored: see current
	sent   int           // actor; attempts sent so far

	live ilist.Links[session[Req, Res, T, P]] // in b.live; guarded by b.mu

	// The first attempt is the request itself, sent on down the path with
	// orig's frame on top (see original.go): set by the actor as it goes,
	// then touched only through its methods until the session is reused.
	orig original[Req, Res, T, P]
	ride stagekit.Ride[Req, Res]

	// The caller's goroutine is busy in an earlier attempt's work: the
	// message its return posts (untilLeafReturns). onFree is made once per
	// pooled session; free is set by the actor before registering.
	free   freeMsg[Req, Res, T, P]
	onFree func()

	// Actor-owned, while waiting or retrying.
	due     time.Time
	waitSeq uint32        // orders sessions whose waits end at one instant: first to wait, first to go
	idx     int           // place in b.waits, -1 when not there
	gate    chan struct{} // closed to stop a gate's goroutine
	unwatch func() bool   // stops watching the request's context
}

// start readies a pooled session for request e (the actor, or a sender on
// the caller's path). No policy method runs yet: the session's own copy of
// the policy comes first.
// Less orders the sessions that wait for a time by the end of their wait
// (dheap.Item; actor).
func (ss *session[Req, Res, T, P]) Less(o *session[Req, Res, T, P]) bool {
	if !ss.due.Equal(o.due) {
		return ss.due.Before(o.due)
	}
	return int32(ss.waitSeq-o.waitSeq) < 0 // wraps around safely
}

// SetIndex records the session's place in the waits (dheap.Item; actor).
func (ss *session[Req, Res, T, P]) SetIndex(i int) { ss.idx = i }

func (ss *session[Req, Res, T, P]) start(e *stagekit.Envelope[Req, Res], proto T) {
	ss.gen.Add(1)
	ss.parent, ss.ctx, ss.origin = e, e.Ctx, e.Origin()
	ss.pol = proto
	ss.bindPolicy()
	ss.state.Store(retrying)
	ss.refs.Store(1)
	ss.idx, ss.sent = -1, 0
}

// send sends one attempt with an inner unit already reserved (actor): the
// request goes, and a copy is kept for the attempt after it; a retry is
// reported to the observer (EventRetried). A panic while copying, or in
// the observer, ends the session instead, and the unit goes back.
func (ss *session[Req, Res, T, P]) send() { ss.sendFrom(false) }

// sendFrom is send, from the actor or (onCaller, the first attempt only)
// from the sender's goroutine, which puts the session in the live list
// once it is running: a Fail that finds it then ends it as any session
// whose first attempt is under way.
func (ss *session[Req, Res, T, P]) sendFrom(onCaller bool) {
	b := ss.b
	var req Req
	if ss.sent == 0 {
		req = ss.parent.Req
	} else {
		req = ss.req // the copy goes; CloneRequest copies it again for the next
		var err error
		if ss.req, ss.again, err = ss.clone(&ss.req); err != nil {
			b.st.Inner().Unreserve()
			var zero Res
			ss.finish(zero, err)
			return
		}
		if r := b.st.Reporter(); r != nil {
			if err := r.Report(troupe.Event{Type: troupe.EventRetried, Attempt: ss.sent, Context: ss.ctx}); err != nil {
				b.st.Inner().Unreserve() // the observer panicked: the session's outcome
				var zero Res
				ss.finish(zero, err)
				return
			}
		}
	}
	rides := ss.sent == 0 && ss.ride.Start(ss.parent, stagekit.Hook[Req, Res](&ss.orig))
	ss.sent++
	ss.stopWatch()
	ss.refs.Add(1)
	ss.state.Store(running)
	next := ss.parent
	if !rides {
		ctx := ss.ctx
		if ss.sent > 1 { // a retry: its number in its context
			ctx = troupe.WithAttempt(ctx, troupe.Attempt{Retry: ss.sent - 1, Hedge: troupe.AttemptFrom(ctx).Hedge})
		}
		next = stagekit.NewChildOf(b.attempts, &ss.origin, ctx, req, stagekit.Hook[Req, Res](ss))
	}
	if onCaller {
		b.mu.Lock()
		b.live.PushFront(ss, &ss.live)
		b.mu.Unlock()
		b.st.SendOnCaller(next)
		return
	}
	b.st.SendInner(next)
}

// Complete is the hook of a later attempt's first frame: the attempt's
// outcome. It runs where the outcome was produced.
func (ss *session[Req, Res, T, P]) Complete(_ *stagekit.Envelope[Req, Res], _ *stagekit.Frame[Req, Res], out stagekit.Outcome[Res]) stagekit.Outcome[Res] {
	res, err := out.Res, out.Err
	defer ss.unref()
	if ss.state.Load() != running {
		return stagekit.Outcome[Res]{Res: res, Err: err} // the session ended meanwhile (Fail): discard
	}
	if res, err, final := ss.settle(res, err); final {
		ss.finish(res, err)
	}
	return stagekit.Outcome[Res]{Res: res, Err: err}
}

// settle judges an attempt's outcome (the session is running): final says
// that it ends the session; otherwise a retry is on its way (or the
// session ended meanwhile).
func (ss *session[Req, Res, T, P]) settle(res Res, err error) (Res, error, bool) {
	if !ss.again {
		return res, err, true // a request that could not be copied is sent once
	}
	if ss.parent.Delivered() || ss.ctx.Err() != nil {
		return res, err, true // nobody waits for this session any more (a timeout above, the caller gone)
	}
	res, err, w, again := ss.judge(res, err)
	if again && ss.b.budget != nil && !ss.b.budget.Withdraw() {
		again = false // the budget is spent: the last outcome stands
	}
	if !again {
		return res, err, true
	}
	if ss.state.CompareAndSwap(running, waiting) {
		ss.b.st.PostControl(&waitMsg[Req, Res, T, P]{ss: ss, gen: ss.gen.Load(), w: w})
	}
	return res, err, false
}

// finish ends the session with an outcome, once: its stage slot is freed
// and the request answered (the stage answers it when its first attempt
// never went; otherwise the outcome goes on from the session's frame, see
// original.go). Not for the first attempt's own outcome (finishOriginal).
func (ss *session[Req, Res, T, P]) finish(res Res, err error) {
	for {
		s := ss.state.Load()
		if s == done {
			return
		}
		if ss.state.CompareAndSwap(s, done) {
			break
		}
	}
	b := ss.b
	idle := ss.leaveLive()
	if !ss.ride.Riding() { // the first attempt never rode the request: the stage holds it
		b.st.Respond(ss.parent, res, err)
	} else {
		b.st.FreeSlot()
		if ss.ride.End(res, err) {
			ss.unref() // the first attempt's: its outcome is discarded at the frame
		}
	}
	ss.ended(idle)
}

// leaveLive takes an ended session out of the live list, and reports
// whether none is left. A session is finished either where its attempt's
// outcome arrived (it was running: nothing to stop) or by the actor: gate
// and unwatch are only ever set by the actor.
func (ss *session[Req, Res, T, P]) leaveLive() (idle bool) {
	ss.stopWatch()
	b := ss.b
	b.mu.Lock()
	b.live.Remove(&ss.live)
	idle = b.live.Len() == 0
	b.mu.Unlock()
	return idle
}

// ended drops an ended session's own reference, once the stage has
// answered it; a draining stage may stop when it was the last.
func (ss *session[Req, Res, T, P]) ended(idle bool) {
	if idle {
		ss.b.st.Recheck()
	}
	ss.unref()
}

func (ss *session[Req, Res, T, P]) unref() {
	if ss.refs.Add(-1) != 0 {
		return
	}
	var zeroT T
	var zeroReq Req
	ss.ride.Release()
	ss.parent, ss.pol, ss.fault, ss.req, ss.unwatch = nil, zeroT, nil, zeroReq, nil
	ss.ctx, ss.origin = nil, stagekit.Origin[Req, Res]{}
	ss.b.sessions.Put(ss)
}

// untilLeafReturns holds the session's next attempt back while the caller
// still runs the work of an earlier one on its own goroutine (actor): the
// attempt is sent when that work returns (freeMsg), with its deadline
// starting then. It reports whether it held it. The registration holds a
// reference, so that the session is not reused before its message came.
func (ss *session[Req, Res, T, P]) untilLeafReturns() bool {
	if ss.onFree == nil {
		ss.onFree = func() { ss.b.st.PostControl(&ss.free) }
	}
	ss.free = freeMsg[Req, Res, T, P]{ss: ss, gen: ss.gen.Load()}
	ss.refs.Add(1)
	if ss.parent.WhenLeafReturns(ss.onFree) {
		return true
	}
	ss.refs.Add(-1) // nothing runs: no reference, and the session is live meanwhile
	return false
}

// watch answers the session when its request's context ends while it waits
// (actor; only on the retry path, so its allocation is not on every request).
func (ss *session[Req, Res, T, P]) watch() {
	if ss.unwatch != nil || ss.ctx.Done() == nil {
		return
	}
	msg := &cancelMsg[Req, Res, T, P]{ss: ss, gen: ss.gen.Load()}
	st := ss.b.st
	ss.unwatch = context.AfterFunc(ss.ctx, func() { st.PostControl(msg) })
}

func (ss *session[Req, Res, T, P]) stopWatch() {
	if ss.unwatch != nil {
		ss.unwatch()
		ss.unwatch = nil
	}
	if ss.gate != nil {
		close(ss.gate)
		ss.gate = nil
	}
}
