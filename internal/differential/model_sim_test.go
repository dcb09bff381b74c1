package differential

import (
	"container/heap"
	"time"
)

// The reference model's clock: an event queue over virtual time. Events
// run one at a time, in the order of their time and, at one instant, of
// their scheduling; each runs to completion, and everything it does at
// that instant happens inside it (the model's stages are plain calls).

type event struct {
	at   time.Duration
	seq  int
	fn   func()
	dead bool
	idx  int
	// The event that scheduled this one at its own instant (the goroutine
	// that woke this one's), and how many steps it had taken then (see
	// cameBefore); nil for one scheduled ahead (a timer) or at the start.
	parent *event
	fork   int
	steps  int
}

type evq []*event

func (q evq) Len() int { return len(q) }
func (q evq) Less(i, j int) bool {
	if q[i].at != q[j].at {
		return q[i].at < q[j].at
	}
	return q[i].seq < q[j].seq
}
func (q evq) Swap(i, j int)    { q[i], q[j] = q[j], q[i]; q[i].idx, q[j].idx = i, j }
func (q *evq) Push(x any)      { e := x.(*event); e.idx = len(*q); *q = append(*q, e) }
func (q *evq) Pop() any        { old := *q; e := old[len(old)-1]; *q = old[:len(old)-1]; return e }
func (q evq) peek() *event     { return q[0] }
func (q *evq) remove(e *event) { heap.Remove(q, e.idx) }

type sim struct {
	now    time.Duration
	seq    int
	q      evq
	before func() // runs before each event
	cur    *event // the event running
	// A stage taking a request, and the end of the request's context, at
	// one instant on two goroutines neither of which woke the other: which
	// comes first decides whether the stage sees the end (takes, the
	// takes at this instant; crossed, that such a pair was seen).
	takes   []take
	crossed bool
}

// forked runs f as a goroutine that the current event starts now: f runs
// at once, but as an event of its own, forked at the current step, so that
// what it touches is not taken to come before what the current event does
// after it.
func (s *sim) forked(f func()) {
	cur := s.cur
	if cur == nil {
		f()
		return
	}
	s.cur = &event{at: s.now, parent: cur, fork: cur.steps}
	cur.steps++
	f()
	s.cur = cur
}

// take is a stage's look at a request's context as it takes the request.
type take struct {
	ctx  *mctx
	ev   *event
	step int
}

// taking notes that the current event takes a request with context c: it
// crosses an end of c (or of a parent) at this instant on a goroutine
// that did not come before it.
func (s *sim) taking(c *mctx) {
	if s.cur == nil {
		return
	}
	for x := c; x != nil; x = x.parent {
		if x.endEv != nil && x.endEv.at == s.now && !s.cameBefore(x.endEv, x.endStep, s.cur) {
			s.crossed = true
		}
	}
	if len(s.takes) > 0 && s.takes[0].ev.at != s.now {
		s.takes = s.takes[:0]
	}
	s.takes = append(s.takes, take{ctx: c, ev: s.cur, step: s.cur.steps})
	s.cur.steps++
}

// ending notes that the current event ends c: it crosses a take of a
// request under c at this instant on a goroutine that did not come before
// it.
func (s *sim) ending(c *mctx) {
	if s.cur == nil {
		return
	}
	c.endEv, c.endStep = s.cur, s.cur.steps
	s.cur.steps++
	for _, t := range s.takes {
		if t.ev.at != s.now || s.cameBefore(t.ev, t.step, s.cur) {
			continue
		}
		for x := t.ctx; x != nil; x = x.parent {
			if x == c {
				s.crossed = true
			}
		}
	}
}

// at runs fn at time t (never before now).
func (s *sim) at(t time.Duration, fn func()) *event {
	s.seq++
	e := &event{at: max(t, s.now), seq: s.seq, fn: fn}
	if s.cur != nil && e.at == s.now {
		e.parent, e.fork = s.cur, s.cur.steps
		s.cur.steps++
	}
	heap.Push(&s.q, e)
	return e
}

// cameBefore reports whether step step of event p, at the current
// instant, comes before what event e does now: e is p, or p woke e's
// goroutine (or one that woke it, and so on) after that step. Otherwise
// the two goroutines run at once, and which goes first is the scheduler's
// choice.
func (s *sim) cameBefore(p *event, step int, e *event) bool {
	if p == e {
		return true
	}
	for ; e.parent != nil; e = e.parent {
		if e.parent == p {
			return step < e.fork
		}
	}
	return false
}

func (s *sim) after(d time.Duration, fn func()) *event { return s.at(s.now+d, fn) }

// stop cancels an event that has not run.
func (s *sim) stop(e *event) {
	if e != nil && !e.dead {
		e.dead = true
		s.q.remove(e)
	}
}

// run runs the events until none is left, or until limit.
func (s *sim) run(limit time.Duration) {
	for s.q.Len() > 0 {
		e := s.q.peek()
		if e.at > limit {
			return
		}
		heap.Pop(&s.q)
		e.dead = true
		s.now = e.at
		if s.before != nil {
			s.before()
		}
		s.cur = e
		e.fn()
		s.cur = nil
	}
}

// mctx is a context in the model: ended by its parent, or by the stage
// that made it until it settles. Its end reaches its children at once, as
// a Go context's Err does; those that wait for it (work that honours its
// context, a stage watching a parked request) hear of it as goroutines
// do, once the goroutine that ended it has gone on: at the same instant,
// after what it was doing.
type mctx struct {
	s        *sim
	parent   *mctx
	err      string // the class it ended with, "" while live
	settled  bool
	children []*mctx
	watchers []func()
	endEv    *event // the event that ended it, and its step then (see sim.taking)
	endStep  int
	// dl is its own deadline, when hasDL: a caller's, or a Timeout's until
	// the call settles (what its Deadline reports).
	dl    time.Duration
	hasDL bool
}

// deadline is its Deadline: its own, or its parent's if earlier.
func (c *mctx) deadline() (time.Duration, bool) {
	var pd time.Duration
	var pok bool
	if c.parent != nil {
		pd, pok = c.parent.deadline()
	}
	if c.hasDL && !c.settled && (!pok || c.dl < pd) {
		return c.dl, true
	}
	return pd, pok
}

func newCtx(parent *mctx) *mctx {
	c := &mctx{parent: parent}
	if parent != nil {
		c.s = parent.s
		parent.children = append(parent.children, c)
	}
	return c
}

// Err is its own end, or its parent's: as a Go context's, it reports the
// parent's end at once.
func (c *mctx) Err() string {
	if c.err == "" && c.parent != nil {
		return c.parent.Err()
	}
	return c.err
}

func (c *mctx) end(err string) {
	if c.err != "" {
		return
	}
	c.err = err
	if c.s != nil {
		c.s.ending(c)
	}
	for _, ch := range c.children {
		ch.end(err)
	}
	c.children = nil
	for _, f := range c.watchers {
		c.s.at(c.s.now, f)
	}
	c.watchers = nil
}

// cancel is the stage that made c ending it: refused once it settled.
func (c *mctx) cancel(err string) {
	if !c.settled {
		c.end(err)
	}
}

// onEnd runs f once c has ended (at once if it has), as a goroutine
// waiting for it would.
func (c *mctx) onEnd(f func()) {
	if c.Err() != "" {
		c.s.at(c.s.now, f)
		return
	}
	c.watchers = append(c.watchers, f)
}

// outcome is what a call gets: a value, or an error's class.
type outcome struct {
	v   int
	err string // "" for a value
	// An open breaker's refusal: when it lets calls through again (what
	// a balancer pauses the endpoint for); not part of what a caller gets.
	retryAt time.Duration
}

func fail(class string) outcome { return outcome{err: class} }

// kont takes an outcome up the path: each stage wraps the one above its own.
type kont func(outcome)

// mreq is one request (one attempt) on its way down.
type mreq struct {
	c        *mcaller
	ctx      *mctx
	id       int
	detached bool // its leaf work runs on a goroutine of its own
}

func (r *mreq) with(ctx *mctx) *mreq { n := *r; n.ctx = ctx; return &n }
