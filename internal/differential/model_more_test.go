package differential

import "time"

// hedge: a session per request, holding the stage's slot; the original
// goes when the inner service grants a unit (in line, like Retry's
// sessions); delay after it, unless the session ended or nobody waits for
// it, one hedge goes, for a unit of its own, its work on a goroutine of
// its own. The first success wins; an error ends the session only when no
// other attempt runs. The losers' contexts are cancelled, the winner's
// settles.
func (w *world) hedge(delay time.Duration, inner mstage) mstage {
	b := w.stage(unbounded, inner)
	h := &mhedge{w: w, b: b, delay: delay}
	h.unit = &waiter{}
	h.unit.grant = func() { b.post(h.onGrant) }
	b.take = func(m *msg) {
		ss := &hsession{h: h, m: m, ctx: m.r.ctx}
		if len(h.needUnit) == 0 && b.inner.tryReserve() {
			ss.sendNext()
			return
		}
		h.queue(ss)
	}
	return b
}

type mhedge struct {
	w        *world
	b        *mbox
	delay    time.Duration
	needUnit []*hsession
	waiting  bool
	unit     *waiter
	// A unit's grant and an attempt's outcome, as goroutines bring them:
	// over a service that is not a stage (an adapter's Reserve on a
	// goroutine of its own) the unit an attempt's end frees below comes
	// on another goroutine than that outcome, at one instant, and which
	// the stage sees first decides whether a hedge waiting for a unit
	// still goes.
	tr tracked
}

// touch notes a grant or an outcome reaching the stage.
func (h *mhedge) touch() { h.w.touch(&h.tr, tStruct, nil, nil, func(p, t touch) bool { return true }) }

type hsession struct {
	h       *mhedge
	m       *msg
	ctx     *mctx
	atts    []*mctx // the attempts' contexts, the original first
	sent    int
	running int
	done    bool
	noMore  bool
	timer   *event
	watched bool
}

func (h *mhedge) queue(ss *hsession) {
	if ss.sent == 0 && !ss.watched {
		ss.watched = true
		ss.ctx.onEnd(func() {
			h.b.post(func() {
				if ss.sent == 0 && h.unqueue(ss) {
					ss.end(fail(ss.ctx.Err()), nil)
				}
			})
		})
	}
	h.needUnit = append(h.needUnit, ss)
	h.b.pause = true
	h.askUnit()
}

func (h *mhedge) unqueue(ss *hsession) bool {
	for i, x := range h.needUnit {
		if x == ss {
			h.needUnit = append(h.needUnit[:i], h.needUnit[i+1:]...)
			if len(h.needUnit) == 0 {
				h.b.setPause(false)
				if h.waiting && h.b.inner.cancelWait(h.unit) {
					h.waiting = false
				}
			}
			return true
		}
	}
	return false
}

func (h *mhedge) askUnit() {
	for !h.waiting && len(h.needUnit) > 0 {
		if !h.b.inner.reserveAsync(h.unit) {
			h.waiting = true
			return
		}
		h.spendNext()
	}
}

func (h *mhedge) onGrant() {
	h.touch()
	h.waiting = false
	h.spendNext()
	h.askUnit()
}

func (h *mhedge) spendNext() {
	var ss *hsession
	for len(h.needUnit) > 0 {
		x := h.needUnit[0]
		h.needUnit = h.needUnit[1:]
		if !x.done && !(x.sent > 0 && x.noMore) {
			ss = x
			break
		}
	}
	if len(h.needUnit) == 0 {
		h.b.setPause(false)
	}
	if ss == nil {
		h.b.inner.unreserve()
		return
	}
	ss.sendNext()
}

// sendNext sends the original, or the hedge, with the unit in hand.
func (ss *hsession) sendNext() {
	h := ss.h
	if ss.sent > 0 && (ss.done || ss.noMore || ss.m.r.c.answered || ss.ctx.Err() != "") {
		ss.noMore = true
		h.b.inner.unreserve()
		return
	}
	ctx := newCtx(ss.ctx)
	ss.atts = append(ss.atts, ctx)
	r := ss.m.r.with(ctx)
	n := ss.sent
	if n > 0 {
		r.detached = true
	}
	ss.sent++
	ss.running++
	if ss.sent == 1 {
		ss.timer = h.w.after(h.delay, func() { h.b.post(ss.due) })
	}
	h.b.sendInner(r, func(o outcome) { ss.outcome(n, o) })
}

// due: the hedge's time came.
func (ss *hsession) due() {
	if ss.done || ss.noMore {
		return
	}
	if ss.m.r.c.answered || ss.ctx.Err() != "" {
		ss.noMore = true
		return
	}
	h := ss.h
	if len(h.needUnit) == 0 && h.b.inner.tryReserve() {
		ss.sendNext()
		return
	}
	h.queue(ss)
}

func (ss *hsession) outcome(n int, o outcome) {
	if ss.done {
		return
	}
	ss.h.touch()
	ss.running--
	if o.err != "" && ss.running > 0 {
		return
	}
	ss.end(o, ss.atts[n])
}

// end ends the session with o, won by the attempt of context won (nil: the
// stage's own outcome).
func (ss *hsession) end(o outcome, won *mctx) {
	if ss.done {
		return
	}
	ss.done = true
	ss.h.w.stop(ss.timer)
	ss.h.b.post(func() { ss.h.unqueue(ss) }) // it may be in line for a unit still
	for i := len(ss.atts) - 1; i >= 0; i-- {
		if c := ss.atts[i]; c == won {
			c.settled = true
		} else {
			c.cancel("canceled")
		}
	}
	ss.h.b.free()
	ss.m.k(o)
}

// breaker: a count window of the last n outcomes; it opens when the
// window holds at least min of them and half failed, refuses every call
// (at its send) for the open delay, then lets trials through, whose
// outcomes, once all are in, close it or open it again. A call's outcome
// counts only in the state that let it through; the caller's own
// cancellation not at all.
func (w *world) breaker(n, min, trials int, delay time.Duration, inner mstage) mstage {
	b := w.stage(unbounded, inner)
	br := &mbreaker{w: w, n: n, min: min, trials: trials, delay: delay}
	b.take = b.forward
	b.onSend = func(m *msg) bool {
		br.advance()
		if !br.admit() {
			b.free()
			o := fail("open")
			if br.state == 1 {
				o.retryAt = br.retryAt // a *breaker.OpenError's RetryAt; zero when half-open
			}
			m.k(o)
			return false
		}
		k, ctx, epoch := m.k, m.r.ctx, br.epoch
		m.k = func(o outcome) {
			if epoch == br.epoch {
				br.record(ctx, o)
			}
			k(o)
		}
		return true
	}
	return b
}

type mbreaker struct {
	w                  *world
	n, min, trials     int
	delay              time.Duration
	state              int // 0 closed, 1 open, 2 half-open
	epoch              int
	window             []bool // failed, oldest first
	admitted           int
	trialN, trialFails int
	retryAt            time.Duration
	alarm              *event
}

func (br *mbreaker) to(s int) { br.state, br.epoch = s, br.epoch+1 }

func (br *mbreaker) advance() {
	if br.state == 1 && br.w.now >= br.retryAt {
		br.admitted, br.trialN, br.trialFails = 0, 0, 0
		br.to(2)
	}
}

func (br *mbreaker) admit() bool {
	switch br.state {
	case 1:
		return false
	case 2:
		if br.admitted == br.trials {
			return false
		}
		br.admitted++
	}
	return true
}

func (br *mbreaker) record(ctx *mctx, o outcome) {
	if o.err != "" && ctx.Err() != "" && matches(o.err, ctx.Err()) {
		if br.state == 2 {
			br.admitted--
		}
		return
	}
	failed := o.err != ""
	switch br.state {
	case 0:
		br.window = append(br.window, failed)
		if len(br.window) > br.n {
			br.window = br.window[1:]
		}
		fails := 0
		for _, f := range br.window {
			if f {
				fails++
			}
		}
		if len(br.window) >= br.min && float64(fails)/float64(len(br.window)) >= 0.5 {
			br.open()
		}
	case 2:
		br.trialN++
		if failed {
			br.trialFails++
		}
		if br.trialN < br.trials {
			return
		}
		if float64(br.trialFails)/float64(br.trialN) >= 0.5 {
			br.open()
			return
		}
		br.window = nil
		br.to(0)
	}
}

func (br *mbreaker) open() {
	br.retryAt = br.w.now + br.delay
	br.to(1)
	br.w.stop(br.alarm)
	br.alarm = br.w.at(br.retryAt, br.advance)
}

// asyncfilter: the check runs on a goroutine of its own for check, holding
// the request's slot; then the request goes on or is rejected, or, when
// its context ended meanwhile, is answered with the context's error.
func (w *world) asyncfilter(check time.Duration, inner mstage) mstage {
	b := w.stage(unbounded, inner)
	checks := map[int]int{}
	started := map[int]time.Duration{}
	b.take = func(m *msg) {
		if at, ok := started[m.r.id]; ok && at == w.now {
			w.racy = true // two checks of one caller at one instant: which takes which time is the scheduler's
		}
		started[m.r.id] = w.now
		d := checkTime(check, m.r.id, checks[m.r.id])
		checks[m.r.id]++
		done := false
		finish := func() {
			if done {
				return
			}
			done = true
			b.post(func() {
				switch {
				case m.r.ctx.Err() != "":
					b.answer(m, fail(m.r.ctx.Err()))
				case rejects(m.r.id):
					b.answer(m, fail("rejected"))
				default:
					b.forward(m)
				}
			})
		}
		ev := w.after(d, finish)
		m.r.ctx.onEnd(func() {
			w.stop(ev)
			w.after(reaction(m.r.id), finish)
		})
	}
	return b
}

// checkTime is how long the k-th check of caller id's requests takes: d,
// and a few nanoseconds of its own, so that two checks that start at one
// instant do not end at one.
func checkTime(d time.Duration, id, k int) time.Duration {
	return d + time.Duration(id*131+k*17)
}

// abandon: a Timeout whose call's work runs on a goroutine of its own, so
// that its deadline answers the caller at once.
func (w *world) abandon(d time.Duration, inner mstage) mstage {
	t := w.timeout(d, inner).(*mbox)
	t.callerPath = false // its work is detached: its actor forwards every request
	send := t.onSend
	t.onSend = func(m *msg) bool {
		m.r = m.r.with(m.r.ctx)
		m.r.detached = true
		return send(m)
	}
	return t
}

// spawnready: c slots; the inner service's readiness is awaited by a
// goroutine of its own for each request (troupe's Adapt: even when the
// inner service is ready, a unit is won in the background first), and the
// call runs with the permit it won on the caller's goroutine, as a call of
// its own into the inner service.
func (w *world) spawnready(c int, inner msvc) mstage {
	b := w.stage(c, &madapter{w: w, svc: inner})
	b.take = b.forward
	return b
}

// madapter is troupe's Adapt over a service: permits won in the
// background, spent last first.
type madapter struct {
	w       *world
	svc     msvc
	ready   []*mpermit // won, not yet spent
	claimed int        // of those, promised to a reserver
	waits   map[*waiter]*bgWait
}

type bgWait struct {
	cancelled bool
	cancel    func() bool // withdraws its Reserve's wait, if it waits
}

func (a *madapter) tryReserve() bool {
	if len(a.ready) > a.claimed {
		a.claimed++
		return true
	}
	return false
}

func (a *madapter) reserveAsync(w *waiter) bool {
	if a.tryReserve() {
		return true
	}
	if a.waits == nil {
		a.waits = map[*waiter]*bgWait{}
	}
	bg := &bgWait{}
	a.waits[w] = bg
	won := func(p *mpermit) {
		if bg.cancelled {
			p.release() // cancelled: what came anyway goes back
			return
		}
		delete(a.waits, w)
		a.ready = append(a.ready, p)
		a.claimed++ // promised to w
		w.grant()
	}
	a.w.at(a.w.now, func() { // the background goroutine
		if bg.cancelled {
			return
		}
		p, cancel := a.w.reserve(a.svc, false, won)
		if p != nil {
			won(p)
			return
		}
		bg.cancel = cancel
	})
	return false
}

func (a *madapter) cancelWait(w *waiter) bool {
	bg, ok := a.waits[w]
	if !ok {
		return false
	}
	delete(a.waits, w)
	bg.cancelled = true
	if bg.cancel != nil && bg.cancel() {
		bg.cancel = nil
	}
	return true
}

func (a *madapter) take() *mpermit {
	n := len(a.ready)
	p := a.ready[n-1]
	a.ready = a.ready[:n-1]
	a.claimed--
	return p
}

func (a *madapter) unreserve() { a.take().release() }

// send hands the caller the call with the permit won, to make on its
// goroutine. Over a stage it is a call of its own into that stage (the
// stage's permit: a root frame of its own, which gives a caller whose
// context ended that context's error); over the downstream it is the
// downstream's function itself (a Func's permit calls it, nothing
// between), whose outcome goes up as it is, as any leaf work's does.
func (a *madapter) send(r *mreq, k kont) {
	r.c.hand(&leafWork{r: r, k: k, permit: a.take()})
}
