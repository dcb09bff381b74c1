package hedge

import (
	"time"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors/stagekit"
)

// sendOriginal sends the request's first attempt with the unit reserved
// for it (actor), at now. The delay is read now: the clock of the first
// hedge starts when the original is sent, not while it waited for a unit.
// A request that will not be hedged keeps its own context. enter says
// that ss is not live yet (Request sends it at once): it goes into the
// live list under the same lock as into the pending one.
//
// The original is the request itself, sent on down the path with a frame
// of the session's on top (the hedges are envelopes of their own, made
// from the request's origin): its outcome comes back to the session
// there, and an outcome the session has first (a hedge's, or the stage
// failing) claims the frame. The session holds a reference on the request
// for that until it is reused.
//
// Until its original is sent, only the actor touches a session (see
// session), so its fields are set before the stage's lock is taken, for
// the lists alone.
func (ss *session[Req, Res]) sendOriginal(now time.Time, enter bool) {
	b := ss.b
	ss.stopWatch()
	if !enter && ss.isDone() { // it ended while it waited for the unit
		b.st.Inner().Unreserve()
		return
	}
	a := &ss.atts[0]
	e := ss.parent
	d, hedged := b.delayAt(now)
	refs := int32(1) // the attempt's
	if hedged {
		a.ctx = b.newCtx(ss.ctx)
		ss.delay = d
		refs++ // the pending list's
	} else {
		ss.noMore = true
	}
	if enter {
		ss.goLive(1 + refs) // and the session's own
	} else {
		ss.ref(refs)
	}
	a.sent = now
	ss.sent, ss.running = 1, 1
	due := now.Add(d)
	riding := ss.ride.Start(e, stagekit.Hook[Req, Res](a))
	b.mu.Lock()
	if enter {
		b.live.PushFront(ss, &ss.live)
	}
	first := hedged && b.pending.insert(ss, due)
	b.mu.Unlock()
	if first {
		b.setAlarm(due)
	}
	ctx := ss.ctx
	if hedged {
		ctx = a.ctx
	}
	if !riding { // a request whose frames run short: the original goes in an envelope of its own
		b.st.SendInner(stagekit.NewChildOf(b.children, &ss.origin, ctx, ss.req, stagekit.Hook[Req, Res](a)))
		return
	}
	if hedged {
		e.SetCtx(a.ctx, false)
		e.ForcesOutcome() // a hedge that wins answers the request while the original's work may still run
	}
	b.st.SendInner(e)
}

// sendHedge sends one more copy of the request with the unit reserved for
// it (actor), unless the session no longer needs it; then the unit goes
// back. Its work runs on a goroutine of its own, beside the original's.
// The budget pays for it here, with the unit in hand.
func (ss *session[Req, Res]) sendHedge() {
	b := ss.b
	req := ss.req
	if b.cfg.clone != nil && !ss.isDone() {
		c, err := stagekit.Guard1("hedge: Clone", func() (Req, error) { return b.cfg.clone(ss.req), nil })
		if err != nil {
			b.st.Inner().Unreserve()
			ss.end(nil, *new(Res), err) // a panic in the user's code: the request's outcome
			return
		}
		req = c
	}
	b.mu.Lock()
	if !ss.done && !ss.noMore && (ss.parent.Delivered() || ss.ctx.Err() != nil) {
		ss.noMore = true // nobody waits for the request any more
	}
	if !ss.done && !ss.noMore && b.cfg.budget != nil && !b.cfg.budget.Withdraw() {
		ss.noMore = true
		b.refused.Add(1)
	}
	if ss.done || ss.noMore {
		b.mu.Unlock()
		b.st.Inner().Unreserve()
		return
	}
	now := b.clock.Now()
	a := &ss.atts[ss.sent]
	a.ctx, a.sent = b.newCtx(ss.ctx), now
	ss.sent++
	n := ss.sent - 1 // the hedge's number: 1 for the first
	ss.running++
	ss.ref(1) // the attempt's reference
	// Its number, for the work.
	actx := troupe.WithAttempt(a.ctx, troupe.Attempt{Retry: troupe.AttemptFrom(ss.ctx).Retry, Hedge: n})
	att := stagekit.NewChildOf(b.children, &ss.origin, actx, req, stagekit.Hook[Req, Res](a))
	att.Detach() // beside the original, which may be running on the caller's goroutine
	var first bool
	delay := ss.delay
	if b.cfg.delays != nil && n < len(b.cfg.delays) {
		delay = b.cfg.delays[n] // before hedge n+1
	}
	due := now.Add(delay)
	if ss.sent <= b.cfg.maxHedges {
		ss.ref(1) // the pending list's reference
		first = b.pending.insert(ss, due)
	}
	b.mu.Unlock()
	if first {
		b.setAlarm(due)
	}
	b.hedges.Add(1)
	if r := b.st.Reporter(); r != nil {
		_ = r.Report(troupe.Event{Type: troupe.EventHedged, Attempt: n, Context: ss.ctx}) // a panic is logged; the hedge goes on
	}
	b.st.SendInner(att)
}
