package stagekit

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/troupe-go/troupe/internal/mailbox"
)

// A Hold keeps what the stages on a call's path give back when its outcome
// passes them (a concurrency limit's slot, an adaptive limit's permit, a
// shared budget's lease) until the caller is done with the outcome, not
// just until it has it: an HTTP response whose body still streams holds
// the downstream as surely as a call in flight does. The caller makes one
// per call (WithHold), calls with the context WithHold returns, and
// releases it when the outcome is no longer in use (the body is closed or
// read to its end), or at once when the outcome holds nothing.
//
// A stage that gives something back at an outcome asks HoldFor first, with
// its frame's Context, and Keeps what it would give back in the Hold it
// returns; the runtime does it for the slots of HoldUntilOutcome stages.
// What is kept goes back, once, at Release; what a stage offers after
// Release goes back at once (Keep reports false). A Hold that is never released keeps what it holds for good, as a
// body never closed keeps its connection.
//
// Its methods are safe for concurrent use.
type Hold struct {
	keeps any // func(Res, error) bool, for the Res given to WithHold; read-only

	mu       sync.Mutex
	released bool               // guarded by mu
	slots    []*mailbox.Mailbox // a slot of each to free; guarded by mu
	fns      []func()           // guarded by mu
}

// holdKey is the context key of a call's Hold.
type holdKey struct{}

// holding is set by the first WithHold: until then no stage looks for a
// Hold, so a process that never makes one pays an atomic load per outcome.
var holding atomic.Bool

// WithHold returns a context carrying a new Hold, and the Hold. Calls made
// with the context (and every context derived from it, such as those the
// stages make for the work below them) keep, in the Hold, what their
// stages give back at an outcome for which keeps returns true; for the
// others (an error, a response that holds nothing), they give it back at
// once. keeps runs wherever the outcome is produced and must not block; a
// nil keeps keeps every outcome. Outcomes of another response type than
// Res are never kept.
func WithHold[Res any](ctx context.Context, keeps func(res Res, err error) bool) (context.Context, *Hold) {
	if keeps == nil {
		keeps = func(Res, error) bool { return true }
	}
	holding.Store(true)
	h := &Hold{keeps: keeps}
	return context.WithValue(ctx, holdKey{}, h), h
}

// HoldFor is for a stage's frame hook that gives something back at the
// outcome res, err: it returns the Hold ctx (the frame's Context) carries
// when that Hold keeps this outcome, nil otherwise (then the stage gives
// back at once). Until a Hold is made in the process it costs an atomic
// load: make what you hand to Keep only once HoldFor returned one.
func HoldFor[Res any](ctx context.Context, res Res, err error) *Hold {
	if !holding.Load() {
		return nil
	}
	return holdFor(ctx, res, err)
}

func holdFor[Res any](ctx context.Context, res Res, err error) *Hold {
	if ctx == nil {
		return nil
	}
	h, _ := ctx.Value(holdKey{}).(*Hold)
	if h == nil {
		return nil
	}
	if keeps, ok := h.keeps.(func(Res, error) bool); !ok || !keeps(res, err) {
		return nil
	}
	return h
}

// Keep keeps release in h, to run once when h is released, and reports
// true; once h is released it reports false and does not call release
// (give back at once then). release runs on the goroutine that releases h
// (the caller's, closing a body): it must not block.
func (h *Hold) Keep(release func()) bool { return h.keep(nil, release) }

// keepSlot keeps a slot of mb in the Hold ctx carries, if it keeps the
// outcome res, err (see HoldFor), without a function made for it. Its
// callers test holding first, where it inlines.
func keepSlot[Res any](ctx context.Context, res Res, err error, mb *mailbox.Mailbox) bool {
	h := holdFor(ctx, res, err)
	return h != nil && h.keep(mb, nil)
}

// keep keeps a slot of mb, or else release, unless h is released.
func (h *Hold) keep(mb *mailbox.Mailbox, release func()) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.released {
		return false
	}
	if mb != nil {
		h.slots = append(h.slots, mb)
	} else {
		h.fns = append(h.fns, release)
	}
	return true
}

// Release gives back everything kept in h, once: the slots first, then the
// kept functions in the order they were kept. Later calls do nothing, and
// what is offered afterwards goes back at once.
func (h *Hold) Release() {
	h.mu.Lock()
	if h.released {
		h.mu.Unlock()
		return
	}
	h.released = true
	slots, fns := h.slots, h.fns
	h.slots, h.fns = nil, nil
	h.mu.Unlock()
	for _, mb := range slots {
		mb.Free()
	}
	for _, f := range fns {
		f()
	}
}

// Kept reports how many things h keeps now (0 once released).
func (h *Hold) Kept() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.slots) + len(h.fns)
}
