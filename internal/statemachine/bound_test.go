package statemachine

import (
	"runtime"
	"runtime/debug"
	"time"

	"pgregory.net/rapid"
)

// Why real time, not testing/synctest: rapid can run a property in a
// bubble (rapid.SyncTest), but a dropped permit is reclaimed by a runtime
// cleanup that runs outside every bubble, and its Release wakes callers
// blocked on channels made inside the bubble, which the runtime turns into
// a panic; and what this test is after is the interleavings of real
// callers, actors and timers, which fake time would serialise. So the
// bounds are real: each blocking operation's context deadline, plus a
// margin (default 2 s, -statemachine.margin) wide enough for -race on two
// busy cores. A hang is infinite, so it still shows, within the margin.
//
// Every operation that may block runs under a real-time watchdog: bounded
// runs it on a goroutine of its own and fails the sequence unless it
// returns within its bound (the context deadline it was given, or 0 for an
// operation that must not wait) plus the margin. A hang is then a failure
// with every goroutine's stack, not a stuck test. A panic out of the
// operation (troupe's API must never let one through) is a
// failure too, reported with its stack instead of killing the process.
func (m *machine) bounded(t *rapid.T, what string, bound time.Duration, op func()) {
	t.Helper()
	done := make(chan string, 1)
	go func() {
		defer func() {
			if v := recover(); v != nil {
				done <- sprint(v) + "\n" + string(debug.Stack())
				return
			}
			done <- ""
		}()
		op()
	}()
	timer := time.NewTimer(bound + m.margin)
	defer timer.Stop()
	select {
	case p := <-done:
		if p != "" {
			t.Fatalf("panic not an outcome: %s panicked: %s", what, p)
		}
	case <-timer.C:
		t.Fatalf("%s did not return within its bound %v plus the margin %v\nstack %s: %s\n%s", what, bound, m.margin, m.s, m.s.counters(), goroutines())
	}
}

// waitUntil polls cond every millisecond until it holds or bound plus the
// margin has passed; it reports whether it held.
func (m *machine) waitUntil(bound time.Duration, cond func() bool) bool {
	end := time.Now().Add(bound + m.margin)
	for !cond() {
		if time.Now().After(end) {
			return false
		}
		time.Sleep(time.Millisecond)
	}
	return true
}

// goroutines returns every goroutine's stack, to show where a hang is.
func goroutines() string {
	buf := make([]byte, 1<<20)
	return string(buf[:runtime.Stack(buf, true)])
}
