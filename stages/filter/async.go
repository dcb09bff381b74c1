package filter

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors/stagekit"
	"github.com/troupe-go/troupe/internal/opt"
)

// AsyncFilter is a running filter stage with an asynchronous check: a
// troupe.Service and a troupe.Closer. It is safe for concurrent use.
type AsyncFilter[Req, Res any] struct {
	stagekit.Handle[Req, Res]
	b *asyncBehavior[Req, Res]
}

// NewAsync spawns an asynchronous filter stage over inner, in host h (nil
// means the default system). check returns the request to hand on, or an
// error to reject it with; it runs on a goroutine of its own, may wait, and
// must honour its context (see the package documentation).
func NewAsync[Req, Res any](h troupe.Host, inner troupe.Service[Req, Res], check func(ctx context.Context, req Req) (Req, error), opts ...Option) (*AsyncFilter[Req, Res], error) {
	if check == nil {
		return nil, opt.Nil("asyncfilter", "check")
	}
	cfg, err := config("asyncfilter", opts)
	if err != nil {
		return nil, err
	}
	b := &asyncBehavior[Req, Res]{check: check, pending: map[*checkMsg[Req, Res]]struct{}{}}
	st, err := stagekit.Spawn[Req, Res](h, cfg, inner, b)
	if err != nil {
		return nil, fmt.Errorf("asyncfilter: %w", err)
	}
	return &AsyncFilter[Req, Res]{Handle: stagekit.NewHandle(st, nil), b: b}, nil
}

// AsyncLayer returns a layer that puts an AsyncFilter with check over the
// service inside it.
func AsyncLayer[Req, Res any](check func(ctx context.Context, req Req) (Req, error), opts ...Option) troupe.Layer[Req, Res] {
	return troupe.LayerFunc[Req, Res](func(h troupe.Host, inner troupe.Service[Req, Res]) (troupe.Service[Req, Res], error) {
		return NewAsync(h, inner, check, opts...)
	})
}

// Checking reports how many requests the stage holds while their checks
// run.
func (f *AsyncFilter[Req, Res]) Checking() int { return int(f.b.running.Load()) }

// asyncBehavior starts a check for each request the stage takes and acts on
// the result the check posts back. A request whose check passed is
// forwarded then; while the stage waits for its inner service, such
// requests wait behind, in order (stagekit.Stage.Forward).
type asyncBehavior[Req, Res any] struct {
	check func(context.Context, Req) (Req, error) // never changed

	pending map[*checkMsg[Req, Res]]struct{} // checks running; owned by the actor
	running atomic.Int32                     // checks running and not yet claimed
}

// checkMsg is one request under check. The stage makes it when it takes the
// request; the check's goroutine writes the result and posts it back as a
// control message.
type checkMsg[Req, Res any] struct {
	context.Context // the request's context; never changed

	b      *asyncBehavior[Req, Res]  // never changed
	s      *stagekit.Stage[Req, Res] // never changed
	e      *stagekit.Envelope[Req, Res]
	cancel context.CancelFunc // ends the check's context; never changed

	// Written by the check's goroutine before it posts m; read by the actor
	// after it receives m.
	req Req
	err error

	// claimed is set by whichever of Control, Fail or Dropped answers or
	// forwards the request: exactly one does.
	claimed atomic.Bool
}

// Request starts the check of a request.
func (b *asyncBehavior[Req, Res]) Request(s *stagekit.Stage[Req, Res], e *stagekit.Envelope[Req, Res]) {
	ctx, cancel := context.WithCancel(e.Ctx)
	m := &checkMsg[Req, Res]{Context: e.Ctx, b: b, s: s, e: e, cancel: cancel}
	b.pending[m] = struct{}{}
	b.running.Add(1)
	go m.run(ctx, e.Req)
}

// run is the check's goroutine.
func (m *checkMsg[Req, Res]) run(ctx context.Context, req Req) {
	m.req, m.err = runCheck(m.b.check, ctx, req)
	m.cancel()
	m.s.PostControl(m)
}

func runCheck[Req any](check func(context.Context, Req) (Req, error), ctx context.Context, in Req) (Req, error) {
	var rejected error
	out, err := stagekit.Guard1("asyncfilter check", func() (Req, error) {
		out, err := check(ctx, in)
		rejected = err
		return out, nil
	})
	if err == nil && rejected != nil {
		err = &RejectedError{Err: rejected}
	}
	return out, err
}

// RejectReason: a rejection is ReasonFiltered (stagekit.Rejecter).
func (b *asyncBehavior[Req, Res]) RejectReason(err error) troupe.Reason { return rejectReason(err) }

// claim reports whether the caller is the one to act on m's request.
func (b *asyncBehavior[Req, Res]) claim(m *checkMsg[Req, Res]) bool {
	if !m.claimed.CompareAndSwap(false, true) {
		return false
	}
	b.running.Add(-1)
	return true
}

// Control acts on a check's result: the request is answered, or forwarded,
// rewritten. A result that comes after Fail answered the request is
// ignored.
func (b *asyncBehavior[Req, Res]) Control(s *stagekit.Stage[Req, Res], msg any) {
	m, ok := msg.(*checkMsg[Req, Res])
	if !ok || m.b != b {
		return
	}
	delete(b.pending, m)
	if !b.claim(m) {
		return
	}
	e := m.e
	m.e = nil
	switch {
	case m.Context.Err() != nil:
		s.Answer(e, m.Context.Err()) // the caller gave up during the check
	case m.err != nil:
		s.Answer(e, m.err)
	default:
		e.Req = m.req
		s.Forward(e)
	}
}

// Fail answers every request under check with err and cancels its check:
// the stage is restarting or stopping.
func (b *asyncBehavior[Req, Res]) Fail(s *stagekit.Stage[Req, Res], err error) {
	for m := range b.pending {
		delete(b.pending, m)
		m.cancel()
		if b.claim(m) {
			e := m.e
			m.e = nil
			s.Answer(e, err)
		}
	}
}

// Idle reports whether no check is running: a closing stage waits for them.
func (b *asyncBehavior[Req, Res]) Idle() bool { return b.running.Load() == 0 }

// Dropped answers the request of a result the stopped stage will never
// process, unless Fail answered it already (it runs first when the stage
// stops, so this is a safety net).
func (b *asyncBehavior[Req, Res]) Dropped(msg any, err error) {
	m, ok := msg.(*checkMsg[Req, Res])
	if !ok || m.b != b || !b.claim(m) {
		return
	}
	m.cancel()
	e := m.e
	m.e = nil
	m.s.Answer(e, err)
}
