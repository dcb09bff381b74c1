package differential

import (
	"strings"
	"time"
)

// world is one run of the model: its clock, the script, and what the
// downstream saw.
type world struct {
	sim
	sc       *script
	calls    []call      // the downstream's calls, in the order they started
	attempts map[int]int // per caller: calls so far
	callers  []*mcaller
	by       *mcaller // the caller whose own goroutine runs the current event; nil for another goroutine
	racy     bool     // the script raced two goroutines at one instant (see deliver)
	raced    bool     // two goroutines at once touched state at one instant, in an order that matters (see tracked)
	setup    bool     // building the stacks (the balancers' endpoints are inserted one by one, each settled)
	// The last caller that began work, when, and whether a call into a
	// service was among what it began then (see pickedUp).
	pickAt     time.Duration
	pickBy     *mcaller
	pickNested bool
}

// call is one downstream call: whose, which (0 first), when it started,
// and below which endpoints and services (see mleaf).
type call struct {
	id, n int
	at    time.Duration
	ep    string
}

// mcaller is a caller and its goroutine: the call's outcome once
// delivered, and the leaf work it runs meanwhile, one at a time.
type mcaller struct {
	w        *world
	id       int
	ctx      *mctx
	answered bool    // the call has its outcome, or the caller gave up
	out      outcome // what the caller gets
	retAt    time.Duration
	returned bool
	gone     string   // set once answered: work handed from then on is answered with it
	busy     *running // the leaf work it runs now, or nil
	work     []*leafWork
	running  int      // its leaf runs under way, on its goroutine or detached
	held     []func() // slots kept until running is 0
	onFree   []func() // what to run when the work it runs returns
	inLine   func()   // while its request waits in the entry stage's line: leave it
	parent   *mcaller // a call made on another caller's goroutine (nested), or nil
	onRet    func()   // a nested call's: what its return does
	inCall   bool     // in a call through a service that is not a stage: what it waits for is its own
	// An HTTP request's (script.http): the status its handler wrote (0:
	// none) and the value it wrote with a 200; its context's error when
	// it returned.
	wrote, wroteV int
	endedAtRet    string
}

type leafWork struct {
	r      *mreq
	k      kont
	leaf   mleaf          // the downstream it calls
	fn     func() outcome // not the downstream: a function of troupe's user (a fallback), instant
	permit *mpermit       // not the downstream itself: a call with a permit (an adapted service's, see madapter)
	at     time.Duration  // when it was handed to the caller
}

type running struct {
	ctx *mctx
}

// matches reports whether an error of class class matches the context
// error ctxErr (errors.Is): a timeout is a deadline.
func matches(class, ctxErr string) bool {
	for _, part := range strings.Split(class, "/") {
		if part == ctxErr || ctxErr == "deadline" && part == "timeout" {
			return true
		}
	}
	return false
}

// deliver is the root frame: the outcome reaches the caller, unless it
// gave up; a caller whose context ended first gets that context's error.
// Leaf work it still runs is told to stop (its outcome came from
// elsewhere).
func (c *mcaller) deliver(o outcome) {
	if c.answered {
		return
	}
	c.answered = true
	if e := c.ctx.Err(); e != "" && (o.err == "" || !matches(o.err, e)) {
		o = fail(e)
	}
	c.out = o
	c.gone = "callergone"
	for _, lw := range c.work {
		if lw.at == c.w.now && c.w.by != c {
			// Work handed to the caller in this instant, which the caller
			// has not begun, and an outcome from another goroutine: which
			// of the two the caller sees first is the scheduler's choice.
			c.w.racy = true
		}
	}
	if c.busy != nil {
		stop := "canceled"
		if matches(o.err, "deadline") {
			stop = "deadline"
		}
		c.busy.ctx.cancel(stop)
	}
	c.loop()
}

// loop is the caller's wait: it returns once answered and free, runs the
// work handed to it, and gives up when its context has ended.
func (c *mcaller) loop() {
	if c.busy != nil || c.returned || c.inCall {
		return
	}
	switch {
	case c.answered:
		c.ret()
	case c.ctx.Err() != "":
		c.giveUp()
	case len(c.work) > 0:
		lw := c.work[0]
		c.work = c.work[1:]
		c.run(lw)
	}
}

// giveUp: the caller's context ended while it waited.
func (c *mcaller) giveUp() {
	if c.answered || c.busy != nil {
		return
	}
	for _, lw := range c.work {
		if lw.at == c.w.now {
			// Work handed to it in the instant its context ended: whether
			// it begins the work before it sees the end is the
			// scheduler's choice (its goroutine wakes for both).
			c.w.racy = true
		}
	}
	c.answered = true
	c.out = fail(c.ctx.Err())
	c.gone = c.ctx.Err()
	if c.inLine != nil {
		c.inLine()
		c.inLine = nil
	}
	c.ret()
}

func (c *mcaller) ret() {
	c.returned = true
	c.retAt = c.w.now
	c.endedAtRet = c.ctx.Err()
	work := c.work
	c.work = nil
	for _, lw := range work {
		if lw.permit != nil {
			lw.permit.release()
		}
		lw.k(fail(c.gone))
	}
	if c.onRet != nil {
		c.onRet()
	}
}

// handTo gives the downstream's work to the caller (the leaf's Send).
func (c *mcaller) handTo(l mleaf, r *mreq, k kont) { c.hand(&leafWork{r: r, k: k, leaf: l}) }

// hand gives lw to the caller: it runs it on its goroutine, in turn; a
// request whose work runs on a goroutine of its own (a hedge's) runs it
// there at once; a caller gone answers it with its error.
func (c *mcaller) hand(lw *leafWork) {
	if c.gone != "" {
		if lw.permit != nil {
			lw.permit.release()
		}
		lw.k(fail(c.gone))
		return
	}
	lw.at = c.w.now
	if lw.r.detached {
		// A goroutine of its own: it begins at once here, but what it
		// does is not ordered after what the handing goroutine does next.
		c.w.forked(func() { c.run(lw) })
		return
	}
	c.work = append(c.work, lw)
	c.wake()
}

// wake has the caller look at its work: its goroutine runs once the one
// that handed the work has gone on.
func (c *mcaller) wake() {
	if c.busy == nil {
		c.w.at(c.w.now, func() { c.w.by = c; c.loop() })
	}
}

// handFn gives the caller a function of the user's to run on its goroutine
// (a fallback's), as leaf work that is not the downstream's; for a request
// whose work runs on a goroutine of its own (a hedge's), on one of its own.
func (c *mcaller) handFn(r *mreq, fn func() outcome, k kont) {
	c.hand(&leafWork{r: r, k: k, fn: fn})
}

// run runs leaf work, on the caller's goroutine (or one of its own, for a
// detached request): a function of the user's, a call with a permit, or
// the downstream's function (leafCall).
func (c *mcaller) run(lw *leafWork) {
	w := c.w
	ctx := newCtx(lw.r.ctx)
	run := &running{ctx: ctx}
	if !lw.r.detached {
		c.busy = run
	}
	c.running++
	ended := false
	end := func(o outcome) {
		if ended {
			return
		}
		ended = true
		ctx.settled = true
		if c.busy == run {
			c.busy = nil
		}
		free := c.onFree
		c.onFree = nil
		if c.running--; c.running == 0 {
			held := c.held
			c.held = nil
			for _, f := range held {
				f()
			}
		}
		lw.k(o)
		for _, f := range free {
			f()
		}
		c.loop()
	}
	if lw.fn != nil {
		end(lw.fn())
		return
	}
	if lw.permit != nil {
		w.pickedUp(c, lw.permit.nested(lw.r))
		lw.permit.call(c, lw.r, ctx, end)
		return
	}
	w.pickedUp(c, false)
	c.leafCall(lw.leaf, lw.r, ctx, end)
}

// leafCall is the downstream's function l on c's goroutine, with ctx: the
// script says how long it takes, what it returns, and whether it honours
// its context; an endpoint slow or failing below it changes that.
func (c *mcaller) leafCall(l mleaf, r *mreq, ctx *mctx, end func(outcome)) {
	w := c.w
	n := w.attempts[c.id]
	w.attempts[c.id]++
	for _, p := range w.calls {
		if p.id == c.id && p.at == w.now {
			w.racy = true // two calls of one caller at one instant: which is which is the scheduler's choice
		}
	}
	w.calls = append(w.calls, call{id: c.id, n: n, at: w.now, ep: l.path})
	st := w.sc.step(c.id, n)
	lat, o := st.lat+l.extra, st.outcome(c.id, n)
	if l.failing {
		lat, o = st.lat/8, fail("leaf")
	}
	by := c
	if r.detached {
		by = nil
	}
	over := false
	var ev *event
	finish := func(o outcome) {
		if !over {
			over = true
			w.stop(ev)
			end(o)
		}
	}
	ev = w.after(lat, func() {
		w.by = by
		if w.sc.http && !over {
			c.root().write(o)
		}
		finish(o)
	})
	if !st.stubborn {
		ctx.onEnd(func() {
			w.stop(ev)
			w.after(reaction(c.id), func() { w.by = by; finish(fail(ctx.Err())) })
		})
	}
}

// pickedUp notes that caller c's goroutine began work now: a call of its
// own into a service (nested), or other work. Two callers that begin at
// one instant, one of them with a call into a service, race there: which
// of their calls a stage takes first is the scheduler's choice (a rate
// limit's unit goes to whichever is taken first).
func (w *world) pickedUp(c *mcaller, nested bool) {
	c = c.root()
	if w.pickAt == w.now && w.pickBy != c && (nested || w.pickNested) {
		w.racy = true
	}
	if w.pickAt != w.now || w.pickBy != c {
		w.pickAt, w.pickBy, w.pickNested = w.now, c, nested
	} else {
		w.pickNested = w.pickNested || nested
	}
}

// nested makes a call into svc (a unit reserved) on the caller's goroutine,
// as troupe.Permit.Call: a caller of its own with the work's context,
// whose outcome ends the work that made it. Its downstream calls count as
// the caller's.
func (c *mcaller) nested(svc mstage, ctx *mctx, end func(outcome)) {
	sub := &mcaller{w: c.w, id: c.id, ctx: ctx, parent: c.root()}
	sub.onRet = func() { end(sub.out) }
	r := &mreq{c: sub, ctx: ctx, id: c.id}
	if ctx.Err() != "" {
		svc.unreserve()
		sub.answered, sub.out = true, fail(ctx.Err())
		sub.ret()
		return
	}
	ctx.onEnd(func() { sub.loop() }) // its wait sees its context end
	svc.send(r, sub.deliver)
}

// keep frees a slot now, or once the caller's leaf work has ended when an
// outcome passed it while work still runs (a HoldUntilOutcome stage's
// frame).
func (c *mcaller) keep(free func()) {
	if c.running == 0 {
		free()
		return
	}
	c.held = append(c.held, free)
}

// whenFree runs f once the leaf work the caller runs returns, and reports
// true; false when it runs none.
func (c *mcaller) whenFree(r *mreq, f func()) bool {
	if r.detached || c.busy == nil {
		return false
	}
	c.onFree = append(c.onFree, f)
	return true
}
