package differential

import (
	"math"
	"slices"
	"time"
)

// mstage is a service in the model, seen from the stage outside it.
type mstage interface {
	tryReserve() bool
	reserveAsync(w *waiter) bool // true: granted now; otherwise w.grant runs later
	cancelWait(w *waiter) bool
	unreserve() // gives back a unit reserved and not used
	send(r *mreq, k kont)
}

type waiter struct {
	grant  func()
	listed bool
}

// mleaf is the downstream function: always ready; its work goes to the
// caller. Below a balancer's endpoints and a steer's services, path names
// them (b1: endpoint 1; s0: service 0, outermost first), and the endpoints
// make it slower by extra, or failing.
type mleaf struct {
	path    string
	extra   time.Duration
	failing bool
}

func (mleaf) tryReserve() bool          { return true }
func (mleaf) reserveAsync(*waiter) bool { return true }
func (mleaf) cancelWait(*waiter) bool   { return false }
func (mleaf) unreserve()                {}
func (l mleaf) send(r *mreq, k kont)    { r.c.handTo(l, r, k) }

const unbounded = math.MaxInt32

// mbox is a stage: a mailbox of cap slots with a line of waiters, a queue
// of control messages and one of requests, and the stage's rules. A
// request taken is handed to take (the behaviour); forward hands it on
// when the inner service is ready, or parks it, pausing intake, until the
// inner service grants a unit.
type mbox struct {
	w       *world
	cap     int
	used    int
	blocked bool // admission closed
	line    []*waiter
	ctl     []func()
	user    []*msg
	pause   bool // the behaviour paused intake
	parked  *msg
	pw      *waiter
	backlog []*msg
	hold    bool // the slot is freed at the outcome, not when handed on
	noKeep  bool // a hold stage that frees at the outcome even while the caller still runs the work
	inner   mstage
	onSend  func(m *msg) bool // at send, before queueing; false: refused (answered, slot freed)
	take    func(m *msg)
	// gate: a caller with ctx about to wait in the line is refused at once
	// (a Limited rate limit and a deadline before the caller's turn); nil:
	// none.
	gate func(ctx *mctx) bool
	busy bool
	// callerPath: the stage forwards every request as it is, and a request
	// sent while the stage is in its ordinary state (nothing parked,
	// queued or paused) crosses it on its sender's goroutine, at once,
	// without the stage's turn (troupe's Config.CallerPath: the limit).
	callerPath bool
	// afterFirst: the caller's path opens only once the actor has had a
	// request (an Adaptive limit reports its starting limit with its
	// first); seen: it has.
	afterFirst, seen bool
	// watchQueued: a request queued behind the one parked is answered as
	// soon as its context ends, not when its turn comes (an Adaptive
	// limit's line watches the contexts of those in it).
	watchQueued bool
	tr          tracked // its units, as goroutines touch them
	// The stages it handed requests on to while it had more work waiting:
	// they run once it has finished the message it is on, with the stage
	// free meanwhile (troupe's mailbox.PostFrom, which spreads a loaded
	// pipeline over the goroutines that carry its requests).
	deferred []*mbox
}

type msg struct {
	r *mreq
	k kont
}

func (b *mbox) tryReserve() bool {
	b.touchUnits(false)
	if b.blocked || len(b.line) > 0 || b.used >= b.cap {
		return false
	}
	b.used++
	return true
}

func (b *mbox) reserveAsync(w *waiter) bool {
	if b.tryReserve() {
		return true
	}
	w.listed = true
	b.line = append(b.line, w)
	return false
}

func (b *mbox) cancelWait(w *waiter) bool {
	b.touchUnits(false)
	if !w.listed {
		return false
	}
	for i, x := range b.line {
		if x == w {
			b.line = append(b.line[:i], b.line[i+1:]...)
			break
		}
	}
	w.listed = false
	return true
}

func (b *mbox) unreserve() { b.free() }

func (b *mbox) free() {
	b.touchUnits(false)
	b.used--
	b.grant()
}

func (b *mbox) grant() {
	for len(b.line) > 0 && !b.blocked && b.used < b.cap {
		w := b.line[0]
		b.line = b.line[1:]
		w.listed = false
		b.used++
		w.grant()
	}
}

func (b *mbox) setAdmission(open bool) {
	b.blocked = !open
	if open {
		b.grant()
	}
}

func (b *mbox) send(r *mreq, k kont) {
	m := &msg{r: r, k: k}
	if b.onSend != nil && !b.onSend(m) {
		return
	}
	if b.onCaller(m) {
		return
	}
	b.user = append(b.user, m)
	b.process()
	if b.watchQueued && slices.Contains(b.user, m) {
		m.r.ctx.onEnd(func() { b.post(func() { b.dropQueued(m) }) })
	}
}

// dropQueued takes m, still queued, whose context has ended: it is
// answered with its context's error.
func (b *mbox) dropQueued(m *msg) {
	i := slices.Index(b.user, m)
	if i < 0 {
		return
	}
	b.user = slices.Delete(b.user, i, i+1)
	b.onRequest(m)
}

// onCaller hands a request on on its sender's goroutine when the stage
// allows it and its inner service is ready, and reports whether it did.
func (b *mbox) onCaller(m *msg) bool {
	if !b.callerPath || b.afterFirst && !b.seen || b.parked != nil || len(b.backlog) > 0 || b.pause || len(b.user) > 0 || m.r.ctx.Err() != "" {
		return false
	}
	if !b.inner.tryReserve() {
		return false
	}
	b.holdOutcome(m)
	if !b.hold {
		b.free()
	}
	b.inner.send(m.r, m.k)
	return true
}

// sendInner hands a request to the inner service; an inner stage runs
// after this one has finished its message when this one has more work
// waiting (queued requests, or waiters in its line).
func (b *mbox) sendInner(r *mreq, k kont) {
	in, ok := b.inner.(*mbox)
	if !ok || len(b.user) == 0 && len(b.line) == 0 {
		b.inner.send(r, k)
		return
	}
	m := &msg{r: r, k: k}
	if in.onSend != nil && !in.onSend(m) {
		return
	}
	if in.onCaller(m) {
		return // the inner stage's caller path takes no turn of its own
	}
	in.user = append(in.user, m)
	if n := len(b.deferred); n == 0 || b.deferred[n-1] != in {
		b.deferred = append(b.deferred, in)
	}
}

// post queues a control message (a grant, a timer, a completion).
func (b *mbox) post(f func()) {
	b.ctl = append(b.ctl, f)
	b.process()
}

func (b *mbox) setPause(p bool) {
	b.pause = p
	if !p {
		b.process()
	}
}

// process runs the stage: control messages first, then requests while
// intake is open. A stage is never entered twice: what it posts to itself
// meanwhile waits in its queues.
func (b *mbox) process() {
	if b.busy {
		return
	}
	b.busy = true
	for {
		switch {
		case len(b.ctl) > 0:
			f := b.ctl[0]
			b.ctl = b.ctl[1:]
			f()
		case b.parked == nil && !b.pause && len(b.user) > 0:
			m := b.user[0]
			b.user = b.user[1:]
			b.onRequest(m)
		default:
			b.busy = false
			return
		}
		if len(b.deferred) > 0 {
			after := b.deferred
			b.deferred = nil
			b.busy = false
			for _, in := range after {
				in.process() // what they post to this stage meanwhile runs it, nested
			}
			b.busy = true
		}
	}
}

// holdOutcome has a hold stage's slot freed at m's outcome (or once the
// caller's work ends, see keep).
func (b *mbox) holdOutcome(m *msg) {
	if !b.hold {
		return
	}
	k, c := m.k, m.r.c
	m.k = func(o outcome) {
		if b.noKeep {
			b.free()
		} else {
			c.keep(b.free)
		}
		k(o)
	}
}

func (b *mbox) onRequest(m *msg) {
	b.seen = true
	b.w.taking(m.r.ctx)
	b.holdOutcome(m)
	if e := m.r.ctx.Err(); e != "" {
		b.answer(m, fail(e))
		return
	}
	b.take(m)
}

// answer ends a request the stage holds with o, freeing its slot.
func (b *mbox) answer(m *msg, o outcome) {
	if !b.hold {
		b.free()
	}
	m.k(o)
}

// forward hands m on to the inner service, or parks it.
func (b *mbox) forward(m *msg) {
	if b.parked != nil {
		b.backlog = append(b.backlog, m)
		return
	}
	if b.inner.tryReserve() {
		b.handOn(m)
		return
	}
	b.park(m)
}

func (b *mbox) handOn(m *msg) {
	if !b.hold {
		b.free()
	}
	b.sendInner(m.r, m.k)
}

func (b *mbox) park(m *msg) {
	if in, ok := b.inner.(*mbox); ok && in.gate != nil && in.gate(m.r.ctx) {
		b.answer(m, fail("limited/deadline")) // the inner stage refused it at once
		return
	}
	b.parked = m
	w := &waiter{}
	w.grant = func() { b.post(func() { b.onGrant(w) }) }
	b.pw = w
	if b.inner.reserveAsync(w) {
		b.unpark()
		b.handOn(m)
		b.drainBacklog()
		return
	}
	m.r.ctx.onEnd(func() { b.post(func() { b.onParkedCtxDone(m, w) }) })
}

func (b *mbox) unpark() *msg {
	m := b.parked
	b.parked, b.pw = nil, nil
	return m
}

func (b *mbox) onGrant(w *waiter) {
	if w != b.pw {
		b.inner.unreserve()
		return
	}
	m := b.unpark()
	if e := m.r.ctx.Err(); e != "" {
		b.inner.unreserve()
		b.answer(m, fail(e))
	} else {
		b.handOn(m)
	}
	b.drainBacklog()
}

func (b *mbox) onParkedCtxDone(m *msg, w *waiter) {
	if b.parked != m || m.r.ctx.Err() == "" || !b.inner.cancelWait(w) {
		return
	}
	b.unpark()
	b.answer(m, fail(m.r.ctx.Err()))
	b.drainBacklog()
}

func (b *mbox) drainBacklog() {
	for len(b.backlog) > 0 && b.parked == nil {
		m := b.backlog[0]
		b.backlog = b.backlog[1:]
		b.forward(m)
	}
}
