package statemachine

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"time"

	"go.uber.org/goleak"
	"pgregory.net/rapid"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors/stagekit"
)

// finish ends a sequence: the downstream answers everything, every permit
// is given back, and then no call may lack its outcome, no capacity may be
// held, a full set of reservations must succeed again, Close and Shutdown
// must drain at once, and no goroutine may be left.
func (m *machine) finish(t *rapid.T, leaks goleak.Option) {
	m.w.drain()
	if m.s.mock != nil {
		m.s.allow(1 << 20)
	}
	for _, p := range m.held {
		var err error
		m.bounded(t, "Release", 0, func() { err = p.Release() })
		if err != nil {
			t.Fatalf("capacity leaked: Release of a fresh permit: %v", err)
		}
	}
	// Nothing the test keeps refers to a permit now: a dropped one can be
	// reclaimed (its slab-mates are unreachable too), within the documented bound
	// of a caller waiting for its slot.
	m.held, m.spent = nil, nil
	m.awaitCalls(t, settleBound, "one outcome per call (a dropped permit must come back within its bound): the downstream answered everything and every permit was released")
	m.check(t)
	m.checkNothingHeld(t)
	if !m.closed && m.broken == nil {
		m.checkFullSet(t)
	}
	if m.broken != nil {
		t.Logf("the stack broke after an injected fault: %v", m.broken)
	}
	if !m.closed {
		kind := rapid.SampledFrom(m.s.closers()).Draw(t, "finalClose")
		m.mustDrain(t, "Close ("+kind+")", func(ctx context.Context) error { return m.s.close(ctx, kind) })
		m.closed = true
	}
	m.mustDrain(t, "Shutdown", m.s.sys.Shutdown)
	if m.pumpCancel != nil {
		m.pumpCancel()
		m.bounded(t, "the mock's pump", 0, func() { <-m.w.pumpDone })
	}
	m.awaitCalls(t, 0, "left behind: Shutdown returned")
	if n := m.w.active.Load(); n != 0 {
		t.Fatalf("left behind: %d downstream calls still run after Shutdown", n)
	}
	if n := m.deadLetters.Load(); n != 0 {
		t.Fatalf("left behind: %d dead letters: messages sent to actors already gone, the first: %v", n, m.deadLetter.Load())
	}
	if n := stagekit.Violations() - m.violations0; n != 0 {
		t.Fatalf("%d internal invariants of package actors broken (see the log)", n)
	}
	if err := goleak.Find(leaks); err != nil {
		t.Fatalf("left behind: goroutines: %v", err)
	}
	if m.w.obs != nil {
		m.w.obs.check(t)
	}
	m.finished = true
	count("sequences")
}

// checkNothingHeld waits until no stage holds a slot and the collector has
// reclaimed every dropped permit, and fails if that does not
// happen within the settle bound plus the margin.
func (m *machine) checkNothingHeld(t *rapid.T) {
	t.Helper()
	held := func() string {
		var b strings.Builder
		for _, st := range m.s.stages {
			if s := st.Stats(); s.Used != 0 {
				fmt.Fprintf(&b, " %s holds %d of %d slots (%d queued);", st.Name(), s.Used, s.Capacity, s.Queued)
			}
		}
		if m.s.mock != nil && m.s.lostUnits() != 0 {
			fmt.Fprintf(&b, " %d units of the mock neither called nor given back;", m.s.lostUnits())
		}
		if m.s.plain != nil && m.s.plain.used() != 0 {
			fmt.Fprintf(&b, " the plain service has %d units taken;", m.s.plain.used())
		}
		if got := troupe.LeakedPermits() - m.leaked0; got < uint64(m.dropped) {
			fmt.Fprintf(&b, " %d of %d dropped permits reclaimed;", got, m.dropped)
		}
		return b.String()
	}
	end := time.Now().Add(settleBound + m.margin)
	for {
		runtime.GC()
		h := held()
		if h == "" {
			break
		}
		if time.Now().After(end) {
			t.Fatalf("capacity leaked: still held once every call had its outcome and every permit was released or dropped:%s", h)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if lib := m.w.drops.libraryDrops(m.s.outer().Name()); lib != "" {
		t.Fatalf("capacity leaked: the library dropped permits without Call or Release:%s", lib)
	}
	if got := troupe.LeakedPermits() - m.leaked0; got != uint64(m.dropped) {
		t.Fatalf("capacity leaked: the collector reclaimed %d permits, the test dropped %d (%v)", got, m.dropped, &m.w.drops)
	}
}

// checkFullSet reserves the outermost stage's whole capacity (at most
// maxFullSet, for a stage with no limit of its own), which must succeed
// again once nothing is held (no capacity leaked), then gives it back.
func (m *machine) checkFullSet(t *rapid.T) {
	t.Helper()
	out := m.s.outer()
	n := min(out.Stats().Capacity, maxFullSet)
	ps := make([]*troupe.Permit[req, int], 0, n)
	defer func() {
		for _, p := range ps {
			_ = p.Release()
		}
	}()
	for i := range n {
		ctx, cancel := context.WithTimeout(context.Background(), settleBound)
		var p *troupe.Permit[req, int]
		var err error
		m.bounded(t, "Reserve", settleBound, func() { p, err = m.s.svc.Reserve(ctx) })
		cancel()
		var ce *troupe.ClosedError
		switch {
		case err == nil:
			ps = append(ps, p)
		case errors.As(err, &ce) && ce.Cause != nil && m.faults > 0:
			m.broken = err
			t.Logf("the stack broke after an injected fault: %v", err)
			return
		default:
			t.Fatalf("capacity leaked: reservation %d of the %d the outermost stage (%s) holds failed once nothing was held: %v", i+1, n, out.Name(), err)
		}
	}
	if s := out.Stats(); s.Used != n {
		t.Fatalf("slot count: %d reservations granted, the outermost stage (%s) counts %d slots used", n, out.Name(), s.Used)
	}
	for _, p := range ps {
		if err := p.Release(); err != nil {
			t.Fatalf("capacity leaked: Release of a fresh permit: %v", err)
		}
	}
	ps = nil
	if !m.waitUntil(0, func() bool { return out.Stats().Used == 0 }) {
		t.Fatalf("capacity leaked: released %d permits, the outermost stage still counts %d slots used", n, out.Stats().Used)
	}
}

// mustDrain runs a Close or Shutdown of a stack that holds nothing: it must
// return nil, at once.
func (m *machine) mustDrain(t *rapid.T, what string, close func(context.Context) error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), closeLong)
	defer cancel()
	var err error
	m.bounded(t, what+" of an idle stack", 0, func() { err = close(ctx) })
	if err != nil {
		t.Fatalf("idle Close failed: %s of an idle stack returned %v", what, err)
	}
}
