package reconnect

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors/stagekit"
)

// errNotConnected answers a request sent with no connection (never
// expected: the placeholder grants no unit).
var errNotConnected = errors.New("reconnect: not connected")

// notConnected is the stage's inner service while there is no connection:
// never ready, so requests park in the stage until a connection replaces it
// (stagekit.Stage.SetInner re-parks them there).
type notConnected[Req, Res any] struct{}

func (notConnected[Req, Res]) TryReserve() (bool, error)                   { return false, nil }
func (notConnected[Req, Res]) ReserveAsync(*stagekit.Waiter) (bool, error) { return false, nil }
func (notConnected[Req, Res]) CancelWait(*stagekit.Waiter) bool            { return true }
func (notConnected[Req, Res]) Unreserve()                                  {}
func (notConnected[Req, Res]) Send(e *stagekit.Envelope[Req, Res]) {
	var zero Res
	e.Answer(zero, errNotConnected)
}

// proxy is the stage's inner service for one connection. A readiness error
// of the connection does not reach the stage (which would break for good):
// the proxy reports the connection broken and the stage waits for
// the next one. It is safe for concurrent use.
type proxy[Req, Res any] struct {
	in     stagekit.Inner[Req, Res]
	gen    uint64
	broken func(gen uint64, err error) // tells the stage; once

	w       *stagekit.Waiter // the proxy's own wait on the connection
	failed  atomic.Bool      // the connection's readiness failed
	mu      sync.Mutex
	outer   *stagekit.Waiter // the stage's waiter, while it waits through w; guarded by mu
	waitErr bool             // w was told an error, so outer will get nothing; guarded by mu
}

func newProxy[Req, Res any](in stagekit.Inner[Req, Res], gen uint64, broken func(uint64, error)) *proxy[Req, Res] {
	p := &proxy[Req, Res]{in: in, gen: gen, broken: broken}
	p.w = stagekit.NewWaiter(p.notified)
	return p
}

func (p *proxy[Req, Res]) fail(err error) {
	if p.failed.CompareAndSwap(false, true) {
		p.broken(p.gen, err)
	}
}

func (p *proxy[Req, Res]) TryReserve() (bool, error) {
	if p.failed.Load() {
		return false, nil
	}
	ok, err := p.in.TryReserve()
	if err != nil {
		p.fail(err)
		return false, nil
	}
	return ok, nil
}

func (p *proxy[Req, Res]) ReserveAsync(w *stagekit.Waiter) (bool, error) {
	if p.failed.Load() {
		return false, nil // the stage is about to move to the next connection
	}
	p.mu.Lock()
	p.outer, p.waitErr = w, false
	p.mu.Unlock()
	granted, err := p.in.ReserveAsync(p.w)
	if err != nil {
		p.fail(err)
		return false, nil
	}
	return granted, nil
}

// notified passes the connection's grant on to the stage; an error is a
// broken connection, which the stage hears about from fail instead.
func (p *proxy[Req, Res]) notified(err error) {
	p.mu.Lock()
	outer := p.outer
	p.outer = nil
	p.waitErr = err != nil
	p.mu.Unlock()
	if err != nil {
		p.fail(err)
		return
	}
	outer.Notify(nil)
}

func (p *proxy[Req, Res]) CancelWait(*stagekit.Waiter) bool {
	if p.in.CancelWait(p.w) {
		return true
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.waitErr // no grant is coming after an error
}

func (p *proxy[Req, Res]) Unreserve()                          { p.in.Unreserve() }
func (p *proxy[Req, Res]) Send(e *stagekit.Envelope[Req, Res]) { p.in.Send(e) }

// Reserve never succeeds: there is no connection. (notConnected is passed to
// stagekit.Spawn as the stage's first inner service; only its Inner side is
// ever used.)
func (notConnected[Req, Res]) Reserve(ctx context.Context) (*troupe.Permit[Req, Res], error) {
	<-ctx.Done()
	return nil, ctx.Err()
}
