package differential

import (
	"strings"
	"time"
)

// msvc is any service of the model: a stage (an mstage: an mbox, an mshed,
// the downstream) or a service that is not one (mmap, msteer, mbal), which
// a stage outside it sees through troupe's Adapt (a madapter, see asInner)
// and a caller reaches through its one-step path (oneStep).
type msvc any

// asInner is what a stage outside s talks to (stagekit.AsInner): a stage
// itself, any other service through Adapt.
func (w *world) asInner(s msvc) mstage {
	if st, ok := s.(mstage); ok {
		return st
	}
	return &madapter{w: w, svc: s}
}

// mpermit is a troupe.Permit: call runs on g's goroutine (the caller's,
// or a hedge's) and ends with end there; release gives it back unused;
// nested says whether the call enters a stage (see pickedUp).
type mpermit struct {
	call    func(g *mcaller, r *mreq, ctx *mctx, end func(outcome))
	release func()
	nested  func(r *mreq) bool
}

// stagePermit is a unit of stage b: its call is a call of its own into b
// (a root frame of its own).
func stagePermit(b mstage) *mpermit {
	return &mpermit{
		call:    func(g *mcaller, _ *mreq, ctx *mctx, end func(outcome)) { g.nested(b, ctx, end) },
		release: b.unreserve,
		nested:  func(*mreq) bool { return true },
	}
}

// leafPermit is the downstream's: its call is the downstream's function
// itself, nothing between.
func leafPermit(l mleaf) *mpermit {
	return &mpermit{
		call:    func(g *mcaller, r *mreq, ctx *mctx, end func(outcome)) { g.leafCall(l, r, ctx, end) },
		release: func() {},
		nested:  func(*mreq) bool { return false },
	}
}

// overloaded is a LoadShed's permit issued while it was full: its call
// sheds at once.
var overloaded = &mpermit{
	call:    func(_ *mcaller, _ *mreq, _ *mctx, end func(outcome)) { end(fail("overloaded")) },
	release: func() {},
	nested:  func(*mreq) bool { return false },
}

// reserve is a goroutine's Reserve on s: the permit at once; or, when done
// (its context had ended: a Reserve that takes a free unit or fails), nil;
// or nil, and got runs with the permit once granted, as the goroutine
// wakes, unless cancel (which reports whether it withdrew the wait) came
// first.
func (w *world) reserve(s msvc, done bool, got func(*mpermit)) (p *mpermit, cancel func() bool) {
	switch s := s.(type) {
	case *mbox:
		// A stage's Reserve takes a free unit even with its context done.
		s.touchUnits(true)
		if s.tryReserve() {
			return stagePermit(s), nil
		}
		if done {
			return nil, nil
		}
		wt := &waiter{}
		wt.grant = func() { w.at(w.now, func() { got(stagePermit(s)) }) }
		if s.reserveAsync(wt) {
			return stagePermit(s), nil
		}
		return nil, func() bool { return s.cancelWait(wt) }
	case *mshed:
		// A LoadShed's never waits: a slot, or a permit that sheds.
		if done {
			return nil, nil
		}
		s.b.touchUnits(true)
		if s.b.tryReserve() {
			return stagePermit(s.b), nil
		}
		return overloaded, nil
	case mleaf:
		if done {
			return nil, nil
		}
		return leafPermit(s), nil
	case *mmap:
		p, cancel := w.reserve(s.inner, done, func(p *mpermit) { got(s.permit(p)) })
		if p != nil {
			p = s.permit(p)
		}
		return p, cancel
	case *msteer:
		if done {
			return nil, nil
		}
		return s.permit(), nil
	case *mbal:
		return s.reserve(done, got)
	}
	panic("reserve on an unknown service")
}

// oneStep is troupe.Do of s on g's goroutine, with r's context: end runs
// on that goroutine once it returns.
func (g *mcaller) oneStep(s msvc, r *mreq, end func(outcome)) {
	switch s := s.(type) {
	case *mbox, *mshed:
		// The stage's ReserveAndCall: a root frame of its own.
		if e := r.ctx.Err(); e != "" {
			end(fail(e))
			return
		}
		sub := &mcaller{w: g.w, id: g.id, ctx: r.ctx, parent: g.root()}
		sub.onRet = func() { end(sub.out) }
		r.ctx.onEnd(func() { sub.loop() })
		sub.call(s.(mstage))
	case mleaf:
		// A FuncService's Reserve, then its function on this goroutine.
		if e := r.ctx.Err(); e != "" {
			end(fail(e))
			return
		}
		g.leafCall(s, r, r.ctx, end)
	case *mmap:
		if f := s.in(r); f != "" {
			end(fail(f))
			return
		}
		g.oneStep(s.inner, r, func(o outcome) { s.out(g, r, r.ctx, o, end) })
	case *msteer:
		i, f := s.choose(r)
		if f != "" {
			end(fail(f))
			return
		}
		g.oneStep(s.svcs[i], r, end)
	case *mbal:
		s.oneStep(g, r, end)
	default:
		panic("oneStep on an unknown service")
	}
}

// nestedOf reports whether a call of r into s enters a stage.
func nestedOf(s msvc, r *mreq) bool {
	switch s := s.(type) {
	case mleaf:
		return false
	case *mmap:
		return nestedOf(s.inner, r)
	case *msteer:
		i, f := s.choose(r)
		return f == "" && nestedOf(s.svcs[i], r)
	}
	return true
}

func (c *mcaller) root() *mcaller {
	for c.parent != nil {
		c = c.parent
	}
	return c
}

// sleep is sleepCtx on g's goroutine: done("") after d, or done(ctx's
// error) a reaction after ctx ended.
func (g *mcaller) sleep(r *mreq, ctx *mctx, d time.Duration, done func(string)) {
	w := g.w
	by := g
	if r.detached {
		by = nil
	}
	over := false
	finish := func(e string) {
		if !over {
			over = true
			done(e)
		}
	}
	ev := w.after(d, func() { w.by = by; finish("") })
	ctx.onEnd(func() {
		w.stop(ev)
		w.after(reaction(r.id), func() { w.by = by; finish(ctx.Err()) })
	})
}

// mmap is a mapping combinator (package mapping) over inner: its
// functions run on the caller's goroutine, in the call; its readiness is
// inner's.
//
//   - mapreq: Request; the first conversion of callers 1, 4, 7, ... fails
//     (badreq), and inner is not called.
//   - mapres: Response; a value v with v%100 == 1 (a caller's second
//     downstream call) fails to convert (badres); others become v+1000.
//   - maperr: Err; an error that is the downstream's (errors.Is) becomes
//     errMapped; others stay as they are.
//   - andthen: AndThen; on a success it waits d, honouring the call's
//     context, and returns v+10000.
type mmap struct {
	w      *world
	kind   string
	inner  msvc
	d      time.Duration
	convs  map[int]int
	convAt map[int]time.Duration
}

func (w *world) mapping(kind string, d time.Duration, inner msvc) *mmap {
	return &mmap{w: w, kind: kind, inner: inner, d: d, convs: map[int]int{}, convAt: map[int]time.Duration{}}
}

// in converts the request: the class of its error, or "".
func (m *mmap) in(r *mreq) string {
	if m.kind != "mapreq" {
		return ""
	}
	if at, ok := m.convAt[r.id]; ok && at == m.w.now {
		m.w.racy = true // two conversions of one caller at one instant: which is first is the scheduler's choice
	}
	m.convAt[r.id] = m.w.now
	k := m.convs[r.id]
	m.convs[r.id]++
	if k == 0 && r.id%3 == 1 {
		return "badreq"
	}
	return ""
}

// out converts the outcome o and ends with it.
func (m *mmap) out(g *mcaller, r *mreq, ctx *mctx, o outcome, end func(outcome)) {
	switch m.kind {
	case "mapres":
		if o.err == "" {
			if o.v%100 == 1 {
				o = fail("badres")
			} else {
				o.v += 1000
			}
		}
	case "maperr":
		if hasPart(o.err, "leaf") {
			o = fail("mapped")
		}
	case "andthen":
		if o.err == "" {
			g.sleep(r, ctx, m.d, func(e string) {
				if e != "" {
					end(fail(e))
					return
				}
				o.v += 10000
				end(o)
			})
			return
		}
	}
	end(o)
}

// permit wraps inner's permit p: the call converts the request (a failure
// releases p unused), calls with p and converts the outcome.
func (m *mmap) permit(p *mpermit) *mpermit {
	return &mpermit{
		call: func(g *mcaller, r *mreq, ctx *mctx, end func(outcome)) {
			if f := m.in(r); f != "" {
				p.release()
				end(fail(f))
				return
			}
			p.call(g, r, ctx, func(o outcome) { m.out(g, r, ctx, o, end) })
		},
		release: p.release,
		nested:  p.nested,
	}
}

// hasPart reports whether an error's class has part p.
func hasPart(class, p string) bool {
	for _, x := range strings.Split(class, "/") {
		if x == p {
			return true
		}
	}
	return false
}

// msteer is a Steer over svcs: the script's route for the caller picks
// one (out of range: noroute; a panic: panic) and the request goes to it
// through its one-step path. Its Reserve holds nothing.
type msteer struct {
	w    *world
	svcs []msvc
}

func (s *msteer) choose(r *mreq) (int, string) {
	id, n := r.id, len(s.svcs)
	if id < len(s.w.sc.routes) {
		switch s.w.sc.routes[id] {
		case -2:
			return -1, "panic"
		case -1:
			return -1, "noroute"
		}
	}
	return s.w.sc.route(id, n), ""
}

func (s *msteer) permit() *mpermit {
	return &mpermit{
		call: func(g *mcaller, r *mreq, ctx *mctx, end func(outcome)) {
			i, f := s.choose(r)
			if f != "" {
				end(fail(f))
				return
			}
			g.oneStep(s.svcs[i], r.with(ctx), end)
		},
		release: func() {},
		nested:  func(r *mreq) bool { return nestedOf(s, r) },
	}
}
