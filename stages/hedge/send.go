package hedge

import (
	"context"
	"time"

	"github.com/troupe-go/troupe/actors/stagekit"
)

// sendOriginal sends the request's first attempt with the unit reserved
// for it (actor). The delay is read now: the clock of the first hedge
// starts when the original is sent, not while it waited for a unit. A
// request that will not be hedged keeps its own context.
func (ss *session[Req, Res]) sendOriginal() {
	b := ss.b
	ss.stopWatch()
	now := time.Now()
	d, hedged := b.delayAt(now)
	ss.mu.Lock()
	if ss.done.Load() {
		ss.mu.Unlock()
		b.st.Inner().Unreserve()
		return
	}
	a := &ss.atts[0]
	ctx := ss.ctx
	if hedged {
		a.ctx = newAttemptCtx(ss.ctx)
		ctx = a.ctx
		ss.delay = d
		b.schedule(ss, now.Add(d))
	} else {
		ss.noMore = true
	}
	a.sent = now
	ss.sent, ss.running = 1, 1
	ss.refs.Add(1) // the attempt's reference
	att := stagekit.NewChild(b.children, ss.parent, ctx, ss.req, stagekit.Hook[Req, Res](a))
	ss.mu.Unlock()
	b.st.SendInner(att)
}

// sendHedge sends one more copy of the request with the unit reserved for
// it (actor), unless the session no longer needs it; then the unit goes
// back. Its work runs on a goroutine of its own, beside the original's.
// The budget pays for it here, with the unit in hand.
func (ss *session[Req, Res]) sendHedge() {
	b := ss.b
	req := ss.req
	if b.cfg.clone != nil && !ss.done.Load() {
		c, err := stagekit.Guard1("hedge: Clone", func() (Req, error) { return b.cfg.clone(ss.req), nil })
		if err != nil {
			b.st.Inner().Unreserve()
			ss.end(nil, *new(Res), err) // a panic in the user's code: the request's outcome
			return
		}
		req = c
	}
	ss.mu.Lock()
	if !ss.done.Load() && !ss.noMore && (ss.parent.Delivered() || ss.ctx.Err() != nil) {
		ss.noMore = true // nobody waits for the request any more
	}
	if !ss.done.Load() && !ss.noMore && b.cfg.budget != nil && !b.cfg.budget.Withdraw() {
		ss.noMore = true
		b.refused.Add(1)
	}
	if ss.done.Load() || ss.noMore {
		ss.mu.Unlock()
		b.st.Inner().Unreserve()
		return
	}
	now := time.Now()
	a := &ss.atts[ss.sent]
	a.ctx, a.sent = newAttemptCtx(ss.ctx), now
	ss.sent++
	ss.running++
	ss.refs.Add(1) // the attempt's reference
	att := stagekit.NewChild(b.children, ss.parent, context.Context(a.ctx), req, stagekit.Hook[Req, Res](a))
	att.Detach() // beside the original, which may be running on the caller's goroutine
	if ss.sent <= b.cfg.maxHedges {
		b.schedule(ss, now.Add(ss.delay))
	}
	ss.mu.Unlock()
	b.hedges.Add(1)
	b.st.SendInner(att)
}
