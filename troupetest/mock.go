package troupetest

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors/stagekit"
)

// Mock is a service driven by its Handle. Its only method is Reserve: like
// every troupe service it is called through a permit. It is safe for
// concurrent use.
type Mock[Req, Res any] struct {
	h *Handle[Req, Res]
}

// Handle drives a Mock. It is safe for concurrent use.
type Handle[Req, Res any] struct {
	mu      sync.Mutex
	allowed int                // reservations that may still succeed; guarded by mu
	broken  error              // readiness error, once set; guarded by mu
	panicV  any                // panic value for the next readiness check; guarded by mu
	waiters []*stagekit.Waiter // in line for a unit; guarded by mu

	requests chan *Request[Req, Res]
	calls    atomic.Int64
	permits  troupe.PermitSource[Req, Res]
}

// ErrBroken is what the mock's readiness fails with after Break(nil).
var ErrBroken = errors.New("troupetest: mock service broken")

// NewMock returns a mock service and its handle. No reservation succeeds
// until the handle allows it.
func NewMock[Req, Res any]() (*Mock[Req, Res], *Handle[Req, Res]) {
	h := &Handle[Req, Res]{requests: make(chan *Request[Req, Res], 64)}
	return &Mock[Req, Res]{h: h}, h
}

// Allow lets n more reservations succeed, waking those waiting first.
func (h *Handle[Req, Res]) Allow(n int) {
	h.mu.Lock()
	h.allowed += n
	ws := h.grantLocked()
	h.mu.Unlock()
	for _, w := range ws {
		w.Notify(nil)
	}
}

func (h *Handle[Req, Res]) grantLocked() []*stagekit.Waiter {
	var ws []*stagekit.Waiter
	for h.allowed > 0 && len(h.waiters) > 0 {
		h.allowed--
		ws = append(ws, h.waiters[0])
		h.waiters = h.waiters[1:]
	}
	return ws
}

// Break makes every readiness check from now on fail with err (ErrBroken
// when err is nil), as tower-test's send_error does; waiters get it too.
func (h *Handle[Req, Res]) Break(err error) {
	if err == nil {
		err = ErrBroken
	}
	h.mu.Lock()
	h.broken = err
	ws := h.waiters
	h.waiters = nil
	h.mu.Unlock()
	for _, w := range ws {
		w.Notify(err)
	}
}

// PanicOnReady makes the next readiness check panic with v: on a stage
// actor, that is a stage failure.
func (h *Handle[Req, Res]) PanicOnReady(v any) {
	h.mu.Lock()
	h.panicV = v
	h.mu.Unlock()
}

// Allowed reports how many reservations may still succeed.
func (h *Handle[Req, Res]) Allowed() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.allowed
}

// Waiting reports how many reservations are waiting for Allow.
func (h *Handle[Req, Res]) Waiting() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.waiters)
}

// Calls reports how many requests reached the mock.
func (h *Handle[Req, Res]) Calls() int64 { return h.calls.Load() }

// Next returns the next request the mock received, waiting for it; nil when
// ctx ends first.
func (h *Handle[Req, Res]) Next(ctx context.Context) *Request[Req, Res] {
	select {
	case r := <-h.requests:
		return r
	case <-ctx.Done():
		return nil
	}
}

// TryNext returns the next request if one has arrived, without waiting.
func (h *Handle[Req, Res]) TryNext() *Request[Req, Res] {
	select {
	case r := <-h.requests:
		return r
	default:
		return nil
	}
}

// Request is one request the mock received. Answer it once with Respond or
// Fail; until then its caller waits (or gives up when its context ends).
//
// Its fields are read-only; answer it once, from any goroutine (a second
// answer blocks: the reply holds one).
type Request[Req, Res any] struct {
	// Value is the request.
	Value Req
	// Ctx is the context the request came with.
	Ctx   context.Context
	reply chan outcome[Res]
}

type outcome[Res any] struct {
	res Res
	err error
}

// Respond answers the request with res.
func (r *Request[Req, Res]) Respond(res Res) { r.reply <- outcome[Res]{res: res} }

// Fail answers the request with err.
func (r *Request[Req, Res]) Fail(err error) { r.reply <- outcome[Res]{err: err} }

// check applies a pending panic and reports the readiness error.
func (h *Handle[Req, Res]) checkLocked() error {
	if v := h.panicV; v != nil {
		h.panicV = nil
		h.mu.Unlock()
		defer h.mu.Lock()
		panic(v)
	}
	return h.broken
}
