package differential

import (
	"math"
	"math/rand/v2"
	"slices"
	"time"
)

// mbal is a balancer (package balance) over endpoints inserted at the
// start, keyed by their index: a ready cache (each endpoint's permit
// reserved in advance, the ready set in the order the balancer keeps it),
// power of two choices drawn from the same PCG as the real one's, pending
// requests or peak-EWMA costs, the failure cooldown, pauses of an endpoint
// that refused a call, the Reserves waiting first come first, and the
// endpoints' watchers.
//
// Which goroutine touches the balancer's state first at one instant is
// the scheduler's choice when neither goroutine's touch comes of the
// other's; the model notes every touch and, when two such touches at one
// instant do not commute, marks the run (world.raced).
type mbal struct {
	w                    *world
	ewma                 bool
	decay, rtt, cooldown time.Duration
	rnd                  *rand.Rand
	eps                  []*mep
	ready                []*mep
	waiters              []*bwait
	tr                   tracked
}

type mep struct {
	svc         msvc
	always      bool // the downstream itself: ready whenever asked
	held        *mpermit
	slot        int // in ready; -1: not in it
	removed     bool
	paused      bool // till pausedTill
	pausedTill  time.Duration
	pauses      int
	timer       *event
	failing     bool
	failedAt    time.Duration
	pending     int
	est         rtt
	wake        bool        // the watcher's token
	watching    bool        // the watcher is awake: reserving, or about to
	cancelWatch func() bool // withdraws the watcher's wait in the endpoint's Reserve
}

// bwait is a Reserve waiting for an endpoint.
type bwait struct {
	got       func(*mpermit)
	handed    bool
	cancelled bool
}

func (w *world) balancer(l layer) *mbal {
	return &mbal{w: w, ewma: l.ewma, decay: l.decay, rtt: 30 * time.Millisecond, cooldown: l.cooldown,
		rnd: rand.New(rand.NewPCG(l.seed, l.seed^0x9e3779b97f4a7c15))}
}

func (b *mbal) insert(svc msvc) *mep {
	_, always := svc.(mleaf)
	ep := &mep{svc: svc, always: always, slot: -1, est: rtt{ns: float64(b.rtt), at: b.w.now}}
	b.eps = append(b.eps, ep)
	b.refill(ep)
	return ep
}

// refill reserves on ep again, on the goroutine that took its permit: a
// free unit now, or its watcher waits for one.
func (b *mbal) refill(ep *mep) {
	done := !ep.always || ep.removed
	if p, _ := b.w.reserve(ep.svc, done, nil); p != nil {
		b.deliver(ep, p)
		return
	}
	b.watchAgain(ep)
}

// watchAgain wakes ep's watcher to reserve on ep, waiting as long as it
// takes.
func (b *mbal) watchAgain(ep *mep) {
	ep.wake = true
	if !ep.watching {
		ep.watching = true
		b.w.at(b.w.now, func() { b.watch(ep) })
	}
}

// permitFor is the permit a pick of ep calls with, counted in ep's load: a
// unit reserved on ep now when it has one free (ep keeps its ready
// permit), otherwise its ready permit, and its watcher reserves again.
func (b *mbal) permitFor(ep *mep) *mpermit {
	done := !ep.always || ep.removed
	if p, _ := b.w.reserve(ep.svc, done, nil); p != nil {
		ep.pending++
		return p
	}
	p := b.take(ep)
	b.watchAgain(ep)
	return p
}

// watch is ep's watcher, awake: it takes the token and reserves on ep,
// waiting as long as it takes; it ends once ep is removed.
func (b *mbal) watch(ep *mep) {
	if ep.removed || !ep.wake {
		ep.watching = false
		return
	}
	ep.wake = false
	got := func(p *mpermit) {
		ep.cancelWatch = nil
		b.deliver(ep, p)
		b.watch(ep)
	}
	p, cancel := b.w.reserve(ep.svc, false, got)
	if p != nil {
		got(p)
		return
	}
	ep.cancelWatch = cancel
}

// deliver makes p ep's ready permit.
func (b *mbal) deliver(ep *mep, p *mpermit) {
	b.touch(tStruct, nil, nil)
	if ep.removed {
		p.release()
		return
	}
	ep.held = p
	if !b.isPaused(ep) {
		b.readyOrHand(ep)
	}
}

// readyOrHand puts ep in the ready set, or hands it to the first waiting
// Reserve (whose goroutine wakes) and reserves on it again.
func (b *mbal) readyOrHand(ep *mep) {
	if len(b.waiters) > 0 {
		wt := b.waiters[0]
		b.waiters = b.waiters[1:]
		t := b.ticket(ep, b.take(ep))
		wt.handed = true
		b.w.at(b.w.now, func() {
			if wt.cancelled {
				t.release()
				return
			}
			wt.got(t)
		})
		b.refill(ep)
		return
	}
	if ep.slot < 0 {
		ep.slot = len(b.ready)
		b.ready = append(b.ready, ep)
	}
}

func (b *mbal) unready(ep *mep) {
	i := ep.slot
	if i < 0 {
		return
	}
	last := len(b.ready) - 1
	b.ready[i] = b.ready[last]
	b.ready[i].slot = i
	b.ready = b.ready[:last]
	ep.slot = -1
}

func (b *mbal) take(ep *mep) *mpermit {
	b.unready(ep)
	p := ep.held
	ep.held = nil
	ep.pending++
	return p
}

func (b *mbal) isPaused(ep *mep) bool {
	if !ep.paused {
		return false
	}
	if b.w.now < ep.pausedTill {
		return true
	}
	ep.paused = false
	return false
}

// pick is power of two choices over the ready set, or nil.
func (b *mbal) pick() *mep {
	n := len(b.ready)
	switch n {
	case 0:
		b.touch(tStruct, nil, nil)
		return nil
	case 1:
		b.touch(tStruct, nil, nil)
		return b.ready[0]
	}
	i := b.rnd.IntN(n)
	j := b.rnd.IntN(n - 1)
	if j >= i {
		j++
	}
	x, y := b.ready[i], b.ready[j]
	b.touch(tPick, x, y)
	if b.less(y, x) {
		return y
	}
	return x
}

// less: one whose last call failed within the cooldown loses to one that
// did not; otherwise the lower cost wins.
func (b *mbal) less(x, y *mep) bool {
	if fx, fy := b.failingNow(x), b.failingNow(y); fx != fy {
		return fy
	}
	if !b.ewma {
		return x.pending < y.pending
	}
	return b.cost(x) < b.cost(y)
}

func (b *mbal) failingNow(ep *mep) bool { return ep.failing && b.w.now-ep.failedAt < b.cooldown }

// cost is ep's peak-EWMA cost; reading it decays the estimate.
func (b *mbal) cost(ep *mep) float64 {
	ep.est = ep.est.decayed(b.w.now, b.decay)
	return ep.est.ns * float64(ep.pending+1)
}

// ticket is the balancer's permit for ep's permit p: its call counts in
// ep's load.
func (b *mbal) ticket(ep *mep, p *mpermit) *mpermit {
	return &mpermit{
		call: func(g *mcaller, r *mreq, ctx *mctx, end func(outcome)) {
			start := b.w.now
			p.call(g, r, ctx, func(o outcome) {
				b.finish(ep, ctx, start, o)
				end(o)
			})
		},
		release: func() {
			p.release()
			b.touch(tLoad, ep, nil)
			ep.pending--
		},
		nested: p.nested,
	}
}

// finish ends a call on ep made with ctx: its round trip and failure
// count, unless its own caller gave up; a refusal pauses ep.
func (b *mbal) finish(ep *mep, ctx *mctx, start time.Duration, o outcome) {
	refused := o.err != "" && (hasPart(o.err, "open") || hasPart(o.err, "overloaded")) && !ep.removed
	if refused && !(ctx.Err() != "" && matches(o.err, ctx.Err())) {
		b.touch(tStruct, nil, nil)
	} else {
		b.touch(tLoad, ep, nil)
	}
	ep.pending--
	if o.err != "" && ctx.Err() != "" && matches(o.err, ctx.Err()) {
		return
	}
	now := b.w.now
	if b.ewma {
		ep.est = ep.est.observe(now-start, now, b.decay)
	}
	if o.err == "" {
		ep.failing, ep.pauses = false, 0
		return
	}
	ep.failing, ep.failedAt = true, now
	if refused {
		b.pause(ep, o, now)
	}
}

// pause keeps ep out of the ready set: until the open breaker's RetryAt
// when it says one, otherwise for the backoff's next delay (10 ms
// doubling to 1 s, no jitter).
func (b *mbal) pause(ep *mep, o outcome, now time.Duration) {
	d := min(10*time.Millisecond<<min(ep.pauses, 20), time.Second)
	if hasPart(o.err, "open") && o.retryAt > now {
		d = o.retryAt - now
	}
	ep.pauses++
	ep.paused, ep.pausedTill = true, now+d
	b.unready(ep)
	b.w.stop(ep.timer)
	ep.timer = b.w.at(now+d, func() { b.resume(ep) })
}

func (b *mbal) resume(ep *mep) {
	b.touch(tStruct, nil, nil)
	if !ep.removed && ep.held != nil && !b.isPaused(ep) {
		b.readyOrHand(ep)
	}
}

// remove takes ep out of the set: its ready permit goes back, its watcher
// gives up, its calls in flight finish.
func (b *mbal) remove(ep *mep) {
	b.touch(tStruct, nil, nil)
	ep.removed = true
	b.eps = slices.DeleteFunc(b.eps, func(x *mep) bool { return x == ep })
	b.unready(ep)
	held := ep.held
	ep.held = nil
	b.w.stop(ep.timer)
	if ep.cancelWatch != nil {
		b.w.at(b.w.now, func() { // the watcher sees its context end
			if ep.cancelWatch != nil && ep.cancelWatch() {
				ep.cancelWatch = nil
				ep.watching = false
			}
		})
	}
	if held != nil {
		held.release()
	}
}

// reserve is the balancer's Reserve: a ticket for the endpoint picked, or
// a wait for the first that becomes ready (none when done).
func (b *mbal) reserve(done bool, got func(*mpermit)) (*mpermit, func() bool) {
	if ep := b.pick(); ep != nil {
		return b.ticket(ep, b.permitFor(ep)), nil
	}
	if done {
		return nil, nil
	}
	wt := &bwait{got: got}
	b.waiters = append(b.waiters, wt)
	return nil, func() bool {
		// Its context ends: the Reserve leaves the line, or gives back
		// the ticket handed to it meanwhile, and returns an error.
		wt.cancelled = true
		b.w.at(b.w.now, func() { b.unwait(wt) })
		return true
	}
}

func (b *mbal) unwait(wt *bwait) {
	b.touch(tStruct, nil, nil)
	if i := slices.Index(b.waiters, wt); i >= 0 {
		b.waiters = slices.Delete(b.waiters, i, i+1)
	}
}

// oneStep is the balancer's ReserveAndCall on g's goroutine: the endpoint
// picked is called with its permit; with none ready, a Reserve with the
// call's context, then the ticket's call.
func (b *mbal) oneStep(g *mcaller, r *mreq, end func(outcome)) {
	if ep := b.pick(); ep != nil {
		p := b.permitFor(ep)
		start := b.w.now
		p.call(g, r, r.ctx, func(o outcome) {
			b.finish(ep, r.ctx, start, o)
			end(o)
		})
		return
	}
	if e := r.ctx.Err(); e != "" {
		end(fail("noneready/" + e))
		return
	}
	wt := &bwait{}
	wt.got = func(t *mpermit) { t.call(g, r, r.ctx, end) }
	b.waiters = append(b.waiters, wt)
	r.ctx.onEnd(func() {
		if wt.handed || wt.cancelled {
			return
		}
		wt.cancelled = true
		b.unwait(wt)
		end(fail("noneready/" + r.ctx.Err()))
	})
}

// The kinds of touch: one of the state a pick reads or changes (the ready
// set, the waiting Reserves, the draws), a pick of a pair, or one of an
// endpoint's load alone (a call ending, a permit given back); of a stage,
// a goroutine's Reserve on it, or any other change of its units.
const (
	tStruct = iota
	tPick
	tLoad
	tReserve
)

type touch struct {
	ev   *event
	step int
	kind int
	a, b *mep
}

// tracked is state that goroutines touch: the touches at the current
// instant.
type tracked struct {
	touches []touch
	at      time.Duration
}

// touch notes a touch of tr by the current event, and marks the run when
// an earlier touch at this instant does not come before it (the two
// goroutines run at once) and the two conflict.
func (w *world) touch(tr *tracked, kind int, x, y *mep, conflict func(p, t touch) bool) {
	if w.setup || w.cur == nil {
		return
	}
	if tr.at != w.now {
		tr.touches, tr.at = tr.touches[:0], w.now
	}
	t := touch{ev: w.cur, step: w.cur.steps, kind: kind, a: x, b: y}
	w.cur.steps++
	for _, p := range tr.touches {
		if !w.cameBefore(p.ev, p.step, t.ev) && conflict(p, t) {
			w.raced = true
		}
	}
	tr.touches = append(tr.touches, t)
}

func (b *mbal) touch(kind int, x, y *mep) { b.w.touch(&b.tr, kind, x, y, balConflict) }

// balConflict: two changes of the set, or a pick and a change of the load
// of an endpoint in its pair, or two of one endpoint's load.
func balConflict(p, t touch) bool {
	switch {
	case p.kind != tLoad && t.kind != tLoad:
		return true
	case p.kind == tLoad && t.kind == tLoad:
		return p.a == t.a
	case t.kind == tLoad:
		p, t = t, p
	}
	return t.kind == tPick && (p.a == t.a || p.a == t.b)
}

// touchUnits notes a change of b's units; a goroutine's Reserve (reserving)
// conflicts with any other at once. A stage of unbounded units has none
// to race for.
func (b *mbox) touchUnits(reserving bool) {
	if b.cap == unbounded {
		return
	}
	kind := tStruct
	if reserving {
		kind = tReserve
	}
	b.w.touch(&b.tr, kind, nil, nil, func(p, t touch) bool { return p.kind == tReserve || t.kind == tReserve })
}

// rtt is peak-EWMA's estimate, as package balance computes it.
type rtt struct {
	ns float64
	at time.Duration
}

func (e rtt) observe(took, now, decay time.Duration) rtt {
	t := float64(max(took, 0))
	if e.ns < t {
		return rtt{ns: t, at: now}
	}
	w := weight(now-e.at, decay)
	return rtt{ns: e.ns*w + t*(1-w), at: now}
}

func (e rtt) decayed(now, decay time.Duration) rtt {
	return rtt{ns: e.ns * weight(now-e.at, decay), at: now}
}

func weight(elapsed, decay time.Duration) float64 {
	if elapsed <= 0 {
		return 1
	}
	x := float64(elapsed) / float64(decay)
	if x < 1e-3 {
		return 1 - x*(1-x/2*(1-x/3))
	}
	return math.Exp(-x)
}
