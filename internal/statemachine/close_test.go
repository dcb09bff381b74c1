package statemachine

import (
	"context"
	"fmt"
	"runtime/debug"
	"time"

	"pgregory.net/rapid"
)

// closeResult is what a Close returned, and the user code still waiting
// with a live context at that moment.
type closeResult struct {
	err     error
	waiting []*blocked
	panicV  string
}

// close closes the stack, one of the ways its host allows, with a short or
// a long deadline. A long Close runs a moment, then the
// downstream is told to finish everything, so that it can drain.
func (m *machine) close(t *rapid.T) {
	if m.steps < m.closeAfter {
		t.Skip("not yet")
	}
	kind := rapid.SampledFrom(m.s.closers()).Draw(t, "how")
	long := rapid.Bool().Draw(t, "long") || m.s.counted() && !enableGoneCallerUnits
	if !long && kind != "stack" && !enableShortHostCloses {
		kind = "stack"
	}
	if m.closeStarted.IsZero() {
		m.closeStarted = time.Now()
	}
	d, peek := closeShort, closeShort+m.margin
	if long {
		d, peek = closeLong, closePeek
	}
	what := fmt.Sprintf("Close (%s, deadline %v)", kind, d)
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	res := make(chan closeResult, 1)
	go func() {
		defer func() {
			if v := recover(); v != nil {
				res <- closeResult{panicV: sprint(v) + "\n" + string(debug.Stack())}
			}
		}()
		err := m.s.close(ctx, kind)
		res <- closeResult{err: err, waiting: m.w.live()}
	}()
	var r closeResult
	select {
	case r = <-res:
	case <-time.After(peek):
		if !long {
			t.Fatalf("%s did not return within its bound plus the margin %v\n%s", what, m.margin, goroutines())
		}
		m.w.drain()
		if m.s.mock != nil {
			m.s.allow(1 << 20)
		}
		select {
		case r = <-res:
		case <-time.After(d + m.margin):
			t.Fatalf("%s did not return within its bound plus the margin %v\n%s", what, m.margin, goroutines())
		}
	}
	m.closed = true
	m.checkClosed(t, what, r)
}

// checkClosed checks the promises of a Close that returned r.
func (m *machine) checkClosed(t *rapid.T, what string, r closeResult) {
	t.Helper()
	if r.panicV != "" {
		t.Fatalf("panic not an outcome: %s panicked: %s", what, r.panicV)
	}
	var callers []string
	for _, b := range r.waiting {
		if b.what != "dial" {
			callers = append(callers, fmt.Sprintf("%s of request %d", b.what, b.id))
		}
	}
	if r.err == nil && len(callers) > 0 {
		t.Fatalf("Close left a caller waiting: %s returned nil while user code still worked for a caller, its context live: %v", what, callers)
	}
	if r.err != nil && !isKnown(r.err) {
		t.Fatalf("unknown error: %s returned an error that matches no sentinel: %v (%T)", what, r.err, r.err)
	}
	m.awaitCalls(t, 0, fmt.Sprintf("Close left a caller waiting: %s returned %v", what, r.err))
	dialing := func() bool {
		for _, b := range m.w.live() {
			if b.what == "dial" {
				return true
			}
		}
		return false
	}
	if !m.waitUntil(0, func() bool { return !dialing() }) {
		t.Fatalf("Close left a dial running: %s returned %v, and a dial still runs with its context live", what, r.err)
	}
}
