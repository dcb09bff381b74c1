package statemachine

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"time"

	"pgregory.net/rapid"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/stages/ratelimit"
	"github.com/troupe-go/troupe/troupetest"
)

// weighted is an operation and how often rapid should pick it.
type weighted struct {
	name   string
	weight int
	run    func(*rapid.T)
}

// actions are the operations rapid chooses from ("" runs after each one),
// each under as many names as its weight: rapid picks names uniformly.
func (m *machine) actions() map[string]func(*rapid.T) {
	ops := []weighted{
		{"reserve", 4, m.reserve},
		{"call", 3, m.call},
		{"do", 3, m.do},
		{"tell", 3, m.tell},
		{"release", 2, m.release},
		{"wait", 2, m.wait},
		{"drop", 1, m.drop},
		{"reuse", 1, m.reuse},
		{"cancel", 1, m.cancelCall},
		{"gc", 1, func(*rapid.T) { runtime.GC() }},
		{"close", 1, m.close},
	}
	add := func(name string, weight int, run func(*rapid.T)) { ops = append(ops, weighted{name, weight, run}) }
	if m.s.mock != nil {
		add("allow", 2, func(t *rapid.T) { m.s.allow(rapid.IntRange(1, 3).Draw(t, "units")) })
		if enableReadyPanics {
			add("restart", 1, m.restart)
		}
	}
	if m.s.plain != nil && enablePlainPanics {
		add("plainPanic", 1, m.plainPanic)
	}
	if m.s.rc != nil && (enableDialFaults || enableDialPanics) {
		add("dialFault", 1, m.dialFault)
	}
	if m.s.rc != nil && enableCallbackPanics {
		add("callbackPanic", 1, m.callbackPanic)
	}
	a := map[string]func(*rapid.T){"": m.check}
	for _, o := range ops {
		for i := range o.weight {
			name := o.name
			if i > 0 {
				name = fmt.Sprintf("%s#%d", o.name, i+1)
			}
			a[name] = func(t *rapid.T) {
				if m.closed {
					m.ended(t)
				}
				o.run(t)
				m.steps++
				count("op " + o.name)
			}
		}
	}
	return a
}

// ended lets a few operations run on a closed stack, then ends the
// sequence: rapid stops repeating once most draws are rejected.
func (m *machine) ended(t *rapid.T) {
	if m.postClose++; m.postClose > postCloseOps {
		_ = rapid.Bool().Draw(t, "ended")
		t.Skip("the stack is closed") // a draw, then a skip: a rejection
	}
}

// check runs after every operation.
func (m *machine) check(t *rapid.T) {
	m.checkCalls(t)
	if f := m.w.takeFaults(); len(f) > 0 {
		t.Fatalf("the downstream saw broken promises: %v", f)
	}
}

func (m *machine) newID() int { m.ids++; return m.ids }

// drawReq draws a request and the script of the user code it meets.
func (m *machine) drawReq(t *rapid.T) req {
	r := req{ID: m.newID()}
	modes := []leafMode{leafOK, leafBlock, leafFail}
	if enableDownstreamPanics {
		modes = append(modes, leafPanic)
	}
	r.Leaf = rapid.SampledFrom(modes).Draw(t, "downstream")
	if m.w.nFilters > 0 {
		r.Reject = rapid.IntRange(0, 4).Draw(t, "reject") == 0
		r.PanicPred = enablePredicatePanics && rapid.IntRange(0, 5).Draw(t, "predicatePanic") == 0
		checks := []checkMode{checkPass, checkBlock}
		if enableCheckPanics {
			checks = append(checks, checkPanic)
		}
		r.Check = rapid.SampledFrom(checks).Draw(t, "check")
	}
	if m.w.maxAttempts > 1 {
		r.PanicPolicy = enablePolicyPanics && rapid.IntRange(0, 5).Draw(t, "policyPanic") == 0
		r.PanicClone = enableClonePanics && rapid.IntRange(0, 5).Draw(t, "clonePanic") == 0
	}
	return r
}

// reserve reserves on the stack with a context that has a short deadline,
// is cancelled already, or is cancelled while it waits.
func (m *machine) reserve(t *rapid.T) {
	mode := rapid.SampledFrom([]string{"deadline", "cancelled", "cancelSoon"}).Draw(t, "ctx")
	ctx, cancel := context.WithTimeout(context.Background(), reserveWait)
	defer cancel()
	bound := reserveWait
	switch mode {
	case "cancelled":
		cancel()
		bound = 0
	case "cancelSoon":
		bound = time.Duration(rapid.IntRange(0, 3).Draw(t, "cancelAfterMs")) * time.Millisecond
		stop := time.AfterFunc(bound, cancel)
		defer stop.Stop()
	}
	var p *troupe.Permit[req, int]
	var err error
	m.bounded(t, "Reserve ("+mode+")", bound, func() { p, err = m.s.svc.Reserve(ctx) })
	switch {
	case err == nil && p == nil:
		t.Fatalf("Reserve returned neither a permit nor an error")
	case err == nil && m.closed:
		t.Fatalf("closed stack took a reservation: Reserve succeeded after Close returned")
	case err == nil:
		m.held = append(m.held, p)
	case ctx.Err() != nil && errors.Is(err, ctx.Err()):
	case errors.Is(err, ratelimit.ErrLimited) && errors.Is(err, context.DeadlineExceeded):
		// A rate limit refuses at once a caller whose deadline ends before
		// its turn (x/time/rate's Wait).
	default:
		m.refused(t, "Reserve", err)
	}
}

// refused checks an error that says the stack is closed.
func (m *machine) refused(t *rapid.T, what string, err error) {
	t.Helper()
	var ce *troupe.ClosedError
	switch {
	case m.closed && errors.Is(err, troupe.ErrClosed):
	case !errors.As(err, &ce):
		t.Fatalf("context honoured: %s failed with %v (%T), neither its context's error nor ErrClosed", what, err, err)
	case ce.Cause != nil && m.faults > 0:
		m.broken = err // an injected fault broke a stage for good
	default:
		t.Fatalf("broken without a readiness error: %s failed with %v, though nobody closed the stack (injected faults: %d)", what, err, m.faults)
	}
}

// take removes the i-th held permit.
func (m *machine) take(t *rapid.T) *troupe.Permit[req, int] {
	if len(m.held) == 0 {
		t.Skip("no permit held")
	}
	i := rapid.IntRange(0, len(m.held)-1).Draw(t, "permit")
	p := m.held[i]
	m.held = slices.Delete(m.held, i, i+1) // clears the slot it frees: nothing else keeps p
	return p
}

// spend keeps a few used permits for the reuse operation; one given to a
// call counts once its call has its outcome (the call may not have used
// it yet before).
func (m *machine) spend(p *troupe.Permit[req, int], c *call) {
	if len(m.spent) < 4 {
		m.spent = append(m.spent, spent{p, c})
	}
}

// spent is a used permit, and the call it was given to (nil: released).
type spent struct {
	p *troupe.Permit[req, int]
	c *call
}

// call calls a held permit, on a goroutine of its own.
func (m *machine) call(t *rapid.T) {
	p := m.take(t)
	m.spend(p, m.start(m.drawReq(t), p))
}

// do reserves and calls in one step (troupe.Do), on a goroutine of its own.
func (m *machine) do(t *rapid.T) { m.start(m.drawReq(t), nil) }

// release gives a held permit back.
func (m *machine) release(t *rapid.T) {
	p := m.take(t)
	m.spend(p, nil)
	var err error
	m.bounded(t, "Release", 0, func() { err = p.Release() })
	if err != nil {
		t.Fatalf("capacity leaked: Release of a fresh permit: %v", err)
	}
}

// drop forgets a held permit: the garbage collector must give its capacity
// back.
func (m *machine) drop(t *rapid.T) {
	m.take(t)
	m.dropped++
	troupetest.ExpectDropped(1)
}

// reuse calls or releases a permit already used: ErrPermitUsed, and the
// downstream never sees the request.
func (m *machine) reuse(t *rapid.T) {
	var used []*troupe.Permit[req, int]
	for _, s := range m.spent {
		if s.c == nil || s.c.finished() {
			used = append(used, s.p)
		}
	}
	if len(used) == 0 {
		t.Skip("no spent permit")
	}
	p := used[rapid.IntRange(0, len(used)-1).Draw(t, "spent")]
	r := req{ID: m.newID()}
	var err error
	if rapid.Bool().Draw(t, "reuseByCall") {
		ctx, cancel := context.WithTimeout(context.Background(), reserveWait)
		defer cancel()
		m.bounded(t, "Call of a spent permit", 0, func() { _, err = p.Call(ctx, r) })
	} else {
		m.bounded(t, "Release of a spent permit", 0, func() { err = p.Release() })
	}
	if !errors.Is(err, troupe.ErrPermitUsed) {
		t.Fatalf("permit used once: a spent permit gave %v, want ErrPermitUsed", err)
	}
	if n := m.w.attempts(r.ID); n != 0 {
		t.Fatalf("permit used once: a spent permit's request reached the downstream %d times", n)
	}
}

// cancelCall cancels the context of a call in flight: it must have its
// outcome at once.
func (m *machine) cancelCall(t *rapid.T) {
	if m.s.adapted() && !enableAdaptedCancel {
		t.Skip("enableAdaptedCancel is off")
	}
	if m.w.maxAttempts > 1 && !enableRetryCancel {
		t.Skip("enableRetryCancel is off")
	}
	if m.s.counted() && !enableGoneCallerUnits {
		t.Skip("enableGoneCallerUnits is off")
	}
	var live []*call
	for _, c := range m.calls {
		if !c.finished() {
			live = append(live, c)
		}
	}
	if len(live) == 0 {
		t.Skip("no call in flight")
	}
	c := live[rapid.IntRange(0, len(live)-1).Draw(t, "call")]
	c.cancel()
	c.cancelled = true
	select {
	case <-c.done:
	case <-time.After(m.margin):
		t.Fatalf("context honoured: %v has no outcome %v after its context was cancelled\n%s", c, m.margin, goroutines())
	}
}

// tell answers one piece of waiting user code: a downstream call, a check
// or a dial.
func (m *machine) tell(t *rapid.T) {
	live := m.w.live()
	if len(live) == 0 {
		t.Skip("nothing waits")
	}
	b := live[rapid.IntRange(0, len(live)-1).Draw(t, "waiting")]
	m.w.tell(b, rapid.Bool().Draw(t, "ok"))
}

// wait lets time pass: timeouts fire, windows open, backoffs end.
func (m *machine) wait(t *rapid.T) {
	time.Sleep(time.Duration(rapid.IntRange(1, 30).Draw(t, "ms")) * time.Millisecond)
}
