package differential

import "time"

// The model of each built-in stage, over mbox: a few lines of rule each.

func (w *world) stage(cap int, inner mstage) *mbox {
	return &mbox{w: w, cap: cap, inner: inner}
}

// limit: n slots, each held until the outcome (and while the caller still
// runs leaf work after an outcome passed it).
func (w *world) limit(n int, inner mstage) mstage {
	b := w.stage(n, inner)
	b.hold, b.callerPath = true, true
	b.take = b.forward
	return b
}

// limitNoKeep is a limit whose slot comes back with the outcome, even
// while the caller still runs the work.
func (w *world) limitNoKeep(n int, inner mstage) mstage {
	b := w.stage(n, inner)
	b.hold, b.noKeep = true, true
	b.take = b.forward
	return b
}

// buffer: n slots, the worker hands each request on as its inner service
// grants a unit.
func (w *world) buffer(n int, inner mstage) mstage {
	b := w.stage(n, inner)
	b.take = b.forward
	return b
}

// timeout: the deadline starts when the request is sent to the stage; it
// fires strictly after it: the call gets the timeout error, and its work's
// context is cancelled; a late outcome is discarded.
func (w *world) timeout(d time.Duration, inner mstage) mstage {
	b := w.stage(unbounded, inner)
	b.take = b.forward
	b.callerPath = true
	b.onSend = func(m *msg) bool {
		ctx := newCtx(m.r.ctx)
		deadline := w.now + d
		ctx.dl, ctx.hasDL = deadline, true
		k := m.k
		done := false
		var timer *event
		timer = w.at(deadline+1, func() {
			b.post(func() {
				if done {
					return
				}
				done = true
				k(fail("timeout"))
				ctx.cancel("deadline")
			})
		})
		m.r = m.r.with(ctx)
		m.k = func(o outcome) {
			if done {
				return
			}
			done = true
			w.stop(timer)
			ctx.settled = true
			if o.err != "" && matches(o.err, "deadline") && w.now >= deadline && !matches(o.err, "timeout") {
				o = fail("timeout")
			}
			k(o)
		}
		return true
	}
	return b
}

// filter: rejects the requests of callers whose id the script rejects.
func (w *world) filter(inner mstage) mstage {
	b := w.stage(unbounded, inner)
	b.take = func(m *msg) {
		if rejects(m.r.id) {
			b.answer(m, fail("rejected"))
			return
		}
		b.forward(m)
	}
	return b
}

// fallback: an error, unless the caller gave up or has its outcome, is
// answered by the fallback function, on the caller's goroutine, with the
// context the stage was given.
func (w *world) fallback(inner mstage) mstage {
	b := w.stage(unbounded, inner)
	b.take = func(m *msg) {
		k, r := m.k, m.r
		m.k = func(o outcome) {
			if o.err == "" || r.c.answered || r.ctx.Err() != "" {
				k(o)
				return
			}
			r.c.handFn(r, func() outcome { return outcome{v: -r.id} }, k)
		}
		b.forward(m)
	}
	return b
}

// loadshed: its own c slots; reserving never waits (a call without a slot
// is shed); inside another stage it is always ready, and a request that
// finds no slot is shed.
type mshed struct{ b *mbox }

func (w *world) loadshed(c int, inner mstage) mstage {
	b := w.stage(c, inner)
	b.take = b.forward
	return &mshed{b: b}
}

// admit takes a slot for a request sent now, or sheds it: a look at the
// units from the sender's goroutine, which races any other goroutine's
// change of them at this instant (two senders, a slot freed).
func (s *mshed) admit() bool {
	s.b.touchUnits(true)
	return s.b.tryReserve()
}

func (s *mshed) tryReserve() bool          { return true }
func (s *mshed) reserveAsync(*waiter) bool { return true }
func (s *mshed) cancelWait(*waiter) bool   { return false }
func (s *mshed) unreserve()                {}
func (s *mshed) send(r *mreq, k kont) {
	if !s.admit() {
		k(fail("overloaded"))
		return
	}
	s.b.send(r, k)
}

// ratelimit: a fixed window of num per per, opened by the first call; the
// call that spends the last unit goes and makes the stage Limited (its
// admission closed, its intake paused) until the window ends; the next
// window chains from the old one's end.
func (w *world) ratelimit(num int, per time.Duration, inner mstage) mstage {
	b := w.stage(unbounded, inner)
	rl := &mrate{w: w, b: b, num: num, per: per, rem: num, start: -1}
	b.take = rl.take
	b.gate = rl.refuse
	return b
}

type mrate struct {
	w       *world
	b       *mbox
	num     int
	per     time.Duration
	start   time.Duration
	rem     int
	kept    []*msg
	alarm   *event
	alarmAt time.Duration
}

func (r *mrate) end() time.Duration { return r.start + r.per }

func (r *mrate) roll(now time.Duration) {
	if r.start >= 0 && now < r.end() {
		return
	}
	start := now
	if r.start >= 0 && r.rem == 0 && now < r.end()+r.per {
		start = r.end()
	}
	r.start, r.rem = start, r.num
}

func (r *mrate) take(m *msg) {
	if len(r.kept) > 0 {
		r.keep(m)
		r.b.setPause(true)
		return
	}
	if !r.spend() {
		r.keep(m)
		return
	}
	r.b.forward(m)
}

// keep keeps m for a later unit, unless its deadline ends before its
// turn, behind those kept: it is refused at once then.
func (r *mrate) keep(m *msg) {
	if r.late(m.r.ctx, len(r.kept)) {
		r.b.answer(m, fail("limited/deadline"))
		return
	}
	r.kept = append(r.kept, m)
}

// refuse is the stage's gate: a caller with ctx that would wait in its
// line, behind those kept, queued and in line, while it is Limited, is
// refused at once when its deadline ends before its turn.
func (r *mrate) refuse(ctx *mctx) bool {
	return r.b.blocked && r.late(ctx, len(r.kept)+len(r.b.user)+len(r.b.line))
}

// late reports whether ctx's deadline ends before the unit k places after
// the next: k/num windows after the current one ends.
func (r *mrate) late(ctx *mctx, k int) bool {
	dl, ok := ctx.deadline()
	return ok && dl < r.end()+time.Duration(k/r.num)*r.per
}

func (r *mrate) spend() bool {
	now := r.w.now
	r.roll(now)
	ok := r.rem > 0
	if ok {
		r.rem--
	}
	if limited := r.rem == 0 && now < r.end() || !ok; limited {
		r.b.setAdmission(false)
		r.b.pause = true
		r.set(r.end())
	}
	return ok
}

func (r *mrate) set(at time.Duration) {
	if r.alarm != nil && !r.alarm.dead && at >= r.alarmAt {
		return
	}
	r.w.stop(r.alarm)
	r.alarmAt = at
	r.alarm = r.w.at(at, func() { r.b.post(r.tick) })
}

func (r *mrate) tick() {
	now := r.w.now
	if r.rem == 0 {
		r.roll(now)
	}
	for len(r.kept) > 0 {
		m := r.kept[0]
		if e := m.r.ctx.Err(); e != "" {
			r.kept = r.kept[1:]
			r.b.answer(m, fail(e))
			continue
		}
		if !r.spend() {
			return
		}
		r.kept = r.kept[1:]
		r.b.forward(m)
	}
	if r.rem == 0 && now < r.end() {
		r.set(r.end())
		return
	}
	r.b.setAdmission(true)
	r.b.setPause(false)
}

// retry: a session per request, holding the stage's slot until it ends;
// an attempt's error is retried up to max times (a panic never), each
// after backoff, for a unit of the inner service reserved first, in line
// behind the sessions that already wait for one (the stage takes no new
// request while any does); the next attempt goes once the caller is free of
// the last one's work.
func (w *world) retry(max int, backoff time.Duration, inner mstage) mstage {
	b := w.stage(unbounded, inner)
	rt := &mretry{w: w, b: b, max: max, backoff: backoff}
	rt.unit = &waiter{}
	rt.unit.grant = func() { b.post(rt.onGrant) }
	b.take = func(m *msg) { rt.retrying(&msession{rt: rt, m: m, ctx: m.r.ctx}) }
	return b
}

type mretry struct {
	w        *world
	b        *mbox
	max      int
	backoff  time.Duration
	needUnit []*msession
	waiting  bool
	unit     *waiter
}

type msession struct {
	rt      *mretry
	m       *msg
	ctx     *mctx
	sent    int
	retries int
	state   int // 0 retrying, 1 running, 2 waiting, 3 done
	timer   *event
	watched bool
}

func (rt *mretry) retrying(ss *msession) {
	if ss.state == 3 {
		return
	}
	ss.state = 0
	c := ss.m.r.c
	if ss.sent > 0 {
		if e := ss.ctx.Err(); e != "" {
			ss.finish(fail(e))
			return
		}
		if c.answered {
			ss.finish(fail("sessionover"))
			return
		}
		if c.whenFree(ss.m.r, func() { rt.b.post(func() { rt.retrying(ss) }) }) {
			return
		}
	}
	if len(rt.needUnit) == 0 && rt.b.inner.tryReserve() {
		ss.send()
		return
	}
	ss.watch()
	rt.needUnit = append(rt.needUnit, ss)
	rt.b.pause = true
	rt.askUnit()
}

func (rt *mretry) askUnit() {
	for !rt.waiting && len(rt.needUnit) > 0 {
		if !rt.b.inner.reserveAsync(rt.unit) {
			rt.waiting = true
			return
		}
		rt.sendNext()
	}
}

func (rt *mretry) onGrant() {
	rt.waiting = false
	if len(rt.needUnit) == 0 {
		rt.b.inner.unreserve()
		return
	}
	rt.sendNext()
	rt.askUnit()
}

func (rt *mretry) sendNext() {
	ss := rt.needUnit[0]
	rt.needUnit = rt.needUnit[1:]
	ss.send()
	if len(rt.needUnit) == 0 {
		rt.b.setPause(false)
	}
}

func (ss *msession) watch() {
	if ss.watched {
		return
	}
	ss.watched = true
	ss.ctx.onEnd(func() { ss.rt.b.post(ss.cancel) })
}

func (ss *msession) cancel() {
	if ss.state != 0 && ss.state != 2 || ss.ctx.Err() == "" {
		return
	}
	rt := ss.rt
	rt.w.stop(ss.timer)
	for i, x := range rt.needUnit {
		if x == ss {
			rt.needUnit = append(rt.needUnit[:i], rt.needUnit[i+1:]...)
			if len(rt.needUnit) == 0 {
				rt.b.setPause(false)
			}
			break
		}
	}
	ss.finish(fail(ss.ctx.Err()))
}

func (ss *msession) send() {
	ss.sent++
	ss.state = 1
	ss.rt.b.sendInner(ss.m.r.with(ss.ctx), ss.outcome)
}

func (ss *msession) outcome(o outcome) {
	if ss.state != 1 {
		return
	}
	rt := ss.rt
	final := o.err == "" || o.err == "panic" || ss.m.r.c.answered || ss.ctx.Err() != ""
	if !final && ss.retries >= rt.max {
		o.err = "exhausted/" + o.err
		final = true
	}
	if final {
		ss.finish(o)
		return
	}
	ss.retries++
	ss.state = 2
	rt.b.post(func() {
		if ss.state != 2 {
			return
		}
		if rt.backoff <= 0 {
			rt.retrying(ss)
			return
		}
		ss.watch()
		ss.timer = rt.w.after(rt.backoff, func() {
			rt.b.post(func() {
				if ss.state == 2 {
					rt.retrying(ss)
				}
			})
		})
	})
}

func (ss *msession) finish(o outcome) {
	if ss.state == 3 {
		return
	}
	ss.state = 3
	ss.rt.w.stop(ss.timer)
	ss.rt.b.free()
	ss.m.k(o)
}
