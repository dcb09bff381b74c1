package ratelimit

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/troupe-go/troupe/actors/stagekit"
)

// ask is one question to a remote limiter about one request. The stage
// makes it when it asks; the ask's goroutine calls Limiter.Allow, writes
// the answer and posts the ask back to the stage as a control message.
type ask[Req, Res any] struct {
	b      *remoteBehavior[Req, Res] // never changed
	s      *stagekit.Stage[Req, Res] // never changed
	cancel context.CancelFunc        // ends the ask's context; never changed
	e      *stagekit.Envelope[Req, Res]

	// Written by the ask's goroutine before it posts the ask; read by the
	// actor after it receives it.
	ok    bool
	retry time.Duration
	at    time.Time // when the answer came, on the stage's clock
	err   error

	// claimed is set by whichever of the answer's handler, Fail or Dropped
	// answers or forwards the request: exactly one does.
	claimed atomic.Bool
}

// start asks the limiter about e on a goroutine of its own (actor).
func (b *remoteBehavior[Req, Res]) start(s *stagekit.Stage[Req, Res], e *stagekit.Envelope[Req, Res]) {
	ctx, cancel := context.WithCancel(e.Ctx)
	m := &ask[Req, Res]{b: b, s: s, e: e, cancel: cancel}
	b.pending[m] = struct{}{}
	b.running++
	go m.run(ctx)
}

// run is the ask's goroutine.
func (m *ask[Req, Res]) run(ctx context.Context) {
	var d decision
	d, m.err = stagekit.Guard1("ratelimit: Limiter.Allow", func() (decision, error) {
		ok, retry, err := m.b.lim.Allow(ctx)
		return decision{ok, retry}, err
	})
	m.ok, m.retry = d.ok, d.retry
	m.at = m.b.clock.Now()
	m.cancel()
	m.s.PostControl(m)
}

// decision is what Limiter.Allow decided.
type decision struct {
	ok    bool
	retry time.Duration
}

// claim reports whether the caller is the one to act on m's request.
func (m *ask[Req, Res]) claim() bool { return m.claimed.CompareAndSwap(false, true) }
