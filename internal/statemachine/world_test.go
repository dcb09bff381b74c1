package statemachine

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/troupe-go/troupe"
)

// leafMode is what the downstream does with each attempt of a request.
type leafMode int

const (
	leafOK    leafMode = iota // answers want(ID)
	leafFail                  // fails with errDownstream
	leafPanic                 // panics (the mock, which cannot, fails instead)
	leafBlock                 // waits until told, or until its context ends
)

func (m leafMode) String() string { return [...]string{"ok", "fail", "panic", "block"}[m] }

// checkMode is what the AsyncFilter's check does with a request.
type checkMode int

const (
	checkPass checkMode = iota
	checkPanic
	checkBlock // until told (pass or reject), or until its context ends
)

// req is the request of every stack. Its fields script what the user code
// along its path does with it.
type req struct {
	ID          int
	Leaf        leafMode
	Reject      bool      // every filter rejects it
	PanicPred   bool      // the Filter's predicate panics on it
	Check       checkMode // the AsyncFilter's check
	PanicPolicy bool      // the retry policy's Retry panics on its outcome
	PanicClone  bool      // the retry policy's CloneRequest panics on it
	Hops        int       // filters it passed: each one rewrites it
}

// want is the response the downstream gives to request id.
func want(id int) int { return id*10 + 7 }

var (
	errDownstream = errors.New("statemachine: downstream failed")
	errRejected   = errors.New("statemachine: rejected by the filter")
	errDial       = errors.New("statemachine: dial refused")
)

// dialMode is what the next dial of a Reconnect does.
type dialMode int

const (
	dialOK dialMode = iota
	dialFail
	dialPanic
	dialBlock // until told, or until its context ends
)

// blocked is a piece of user code waiting to be told what to do: a
// downstream call, an AsyncFilter check or a dial.
type blocked struct {
	what   string // "leaf", "check" or "dial"
	id     int    // the request's ID (-1 for a dial)
	ctx    context.Context
	answer func(ok bool) // called at most once, by whoever takes it out of the list
}

// world is everything on the user's side of the stack: the downstream, the
// user code the stages run, and what it saw. It is shared with the
// goroutines the stages and the callers run it on.
type world struct {
	nFilters    int // filters in the stack; set before any request
	maxAttempts int // attempts one request may make downstream; set before any request
	conn        troupe.Service[req, int]
	obs         *pairs // the system's observer, if the sequence drew one; set before any request

	drops         drops        // permits the collector reclaimed
	active        atomic.Int64 // downstream functions running (Func and plain leaves)
	panicOnChange atomic.Bool  // the next Reconnect state change panics

	mu       sync.Mutex
	draining bool          // everything that would block answers at once; guarded by mu
	waiting  []*blocked    // guarded by mu
	seen     map[int]int   // downstream attempts by request ID; guarded by mu
	faults   []string      // broken promises seen downstream; guarded by mu
	nextDial dialMode      // guarded by mu
	pumpDone chan struct{} // closed when the mock's pump ends (nil without a mock)
}

func newWorld() *world { return &world{seen: map[int]int{}, maxAttempts: 1} }

// fault records a promise broken where user code saw it.
func (w *world) faultLocked(format string, args ...any) {
	w.faults = append(w.faults, fmt.Sprintf(format, args...))
}

// arrive records an attempt of r reaching the downstream.
func (w *world) arrive(r req) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.seen[r.ID]++
	if w.nFilters > 0 && r.Reject {
		w.faultLocked("filter bypassed: request %d reached the downstream though every filter rejects it", r.ID)
	}
	if r.Hops != w.nFilters {
		w.faultLocked("rewrite lost: request %d reached the downstream rewritten by %d filters, the stack has %d", r.ID, r.Hops, w.nFilters)
	}
	if n := w.seen[r.ID]; n > w.maxAttempts {
		w.faultLocked("one outcome per call: request %d reached the downstream %d times; its retries allow %d", r.ID, n, w.maxAttempts)
	}
}

// takeFaults returns the broken promises recorded so far, and forgets them.
func (w *world) takeFaults() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	f := w.faults
	w.faults = nil
	return f
}

// attempts reports how often request id reached the downstream.
func (w *world) attempts(id int) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.seen[id]
}

// block waits until told or until ctx ends: nil when told "ok".
func (w *world) block(ctx context.Context, what string, id int) error {
	ch := make(chan bool, 1)
	b := &blocked{what: what, id: id, ctx: ctx, answer: func(ok bool) { ch <- ok }}
	if !w.enqueue(b) {
		return nil
	}
	defer w.remove(b)
	select {
	case ok := <-ch:
		if ok {
			return nil
		}
		return errDownstream
	case <-ctx.Done():
		return ctx.Err()
	}
}

// enqueue lists b, unless the world is draining.
func (w *world) enqueue(b *blocked) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.draining {
		return false
	}
	w.waiting = append(w.waiting, b)
	return true
}

func (w *world) remove(b *blocked) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	for i, x := range w.waiting {
		if x == b {
			w.waiting = append(w.waiting[:i], w.waiting[i+1:]...)
			return true
		}
	}
	return false
}

// live lists the waiting work whose context has not ended.
func (w *world) live() []*blocked {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []*blocked
	for _, b := range w.waiting {
		if b.ctx.Err() == nil {
			out = append(out, b)
		}
	}
	return out
}

// tell answers b, unless someone else took it out of the list first.
func (w *world) tell(b *blocked, ok bool) {
	if w.remove(b) {
		b.answer(ok)
	}
}

// drain makes all user code answer at once from now on, and answers all
// that waits.
func (w *world) drain() {
	w.mu.Lock()
	w.draining = true
	ws := w.waiting
	w.waiting = nil
	w.mu.Unlock()
	for _, b := range ws {
		b.answer(true)
	}
}

// serve is the downstream function (actors.Func, and the plain leaf's
// permits).
func (w *world) serve(ctx context.Context, r req) (int, error) {
	w.arrive(r)
	w.active.Add(1)
	defer w.active.Add(-1)
	switch r.Leaf {
	case leafFail:
		return 0, errDownstream
	case leafPanic:
		panic(fmt.Sprintf("statemachine: downstream panics on request %d", r.ID))
	case leafBlock:
		if err := w.block(ctx, "leaf", r.ID); err != nil {
			return 0, err
		}
	}
	return want(r.ID), nil
}

// predicate is the Filter's.
func (w *world) predicate(r req) (req, error) {
	r.Hops++
	if r.PanicPred {
		panic(fmt.Sprintf("statemachine: predicate panics on request %d", r.ID))
	}
	if r.Reject {
		return r, errRejected
	}
	return r, nil
}

// check is the AsyncFilter's.
func (w *world) check(ctx context.Context, r req) (req, error) {
	r.Hops++
	if r.Reject {
		return r, errRejected
	}
	switch r.Check {
	case checkPanic:
		panic(fmt.Sprintf("statemachine: check panics on request %d", r.ID))
	case checkBlock:
		if err := w.block(ctx, "check", r.ID); err != nil {
			return r, errRejected
		}
	}
	return r, nil
}
