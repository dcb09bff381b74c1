package redisquota

import (
	"context"
	"sync/atomic"

	"github.com/troupe-go/troupe/actors/stagekit"
)

// limitBehavior is a SharedLimit stage's part. Request, Control, Fail and
// Idle run on the stage's actor; Complete on the goroutine of each
// outcome; the lease round trips on goroutines of their own.
//
// While a lease is being acquired the stage pauses its intake, so that the
// requests behind wait in the mailbox, and takes the next request once it
// has handed this one on (or answered it).
type limitBehavior[Req, Res any] struct {
	budget *Budget                   // never changed
	st     *stagekit.Stage[Req, Res] // set by NewLimit before any request

	held      atomic.Int64 // leases held by calls handed on
	releasing atomic.Int64 // releases under way; the stage is not idle before they end

	// Owned by the actor.
	cur   *acquire[Req, Res]             // the acquisition under way, or nil
	queue []*stagekit.Envelope[Req, Res] // taken while one was under way (intake was paused: normally empty)
}

// acquire is one request waiting for its lease. Its goroutine writes lease
// and err, then posts it to the stage.
type acquire[Req, Res any] struct {
	b      *limitBehavior[Req, Res] // never changed
	cancel context.CancelFunc       // never changed
	e      *stagekit.Envelope[Req, Res]
	lease  *Lease
	err    error
	// claimed is set by whichever of Control, Fail or Dropped acts on the
	// request: exactly one does.
	claimed atomic.Bool
}

// Request takes e in line, and starts acquiring its lease if none is under way.
func (b *limitBehavior[Req, Res]) Request(s *stagekit.Stage[Req, Res], e *stagekit.Envelope[Req, Res]) {
	b.queue = append(b.queue, e)
	b.pump(s)
}

// pump starts acquiring the lease of the first in line.
func (b *limitBehavior[Req, Res]) pump(s *stagekit.Stage[Req, Res]) {
	for b.cur == nil && len(b.queue) > 0 {
		e := b.queue[0]
		b.queue[0] = nil
		b.queue = b.queue[1:]
		if err := e.Ctx.Err(); err != nil {
			s.Answer(e, err)
			continue
		}
		ctx, cancel := context.WithCancel(e.Ctx)
		a := &acquire[Req, Res]{b: b, e: e, cancel: cancel}
		b.cur = a
		go a.run(ctx)
	}
	if len(b.queue) == 0 {
		b.queue = nil
	}
	s.PauseRequests(b.cur != nil)
}

func (a *acquire[Req, Res]) run(ctx context.Context) {
	a.lease, a.err = a.b.budget.Acquire(ctx)
	a.cancel()
	a.b.st.PostControl(a)
}

// Control hands on the request whose lease came, behind a frame that
// releases it with the outcome, or answers it with the error.
func (b *limitBehavior[Req, Res]) Control(s *stagekit.Stage[Req, Res], msg any) {
	a, ok := msg.(*acquire[Req, Res])
	if !ok || a.b != b {
		return
	}
	if b.cur == a {
		b.cur = nil
	}
	if !a.claimed.CompareAndSwap(false, true) {
		b.releaseAsync(a.lease) // Fail answered the request
		b.pump(s)
		return
	}
	e := a.e
	a.e = nil
	switch {
	case e.Ctx.Err() != nil:
		b.releaseAsync(a.lease)
		s.Answer(e, e.Ctx.Err())
	case a.err != nil:
		s.Answer(e, a.err)
	default:
		f, err := e.Push(b)
		if err != nil {
			b.releaseAsync(a.lease)
			s.Answer(e, err)
			break
		}
		f.Aux = a.lease
		b.held.Add(1)
		s.Forward(e)
	}
	b.pump(s)
}

// Complete is the hook of the stage's frames: the call has its outcome,
// and its lease goes back.
func (b *limitBehavior[Req, Res]) Complete(_ *stagekit.Envelope[Req, Res], f *stagekit.Frame[Req, Res], out stagekit.Outcome[Res]) stagekit.Outcome[Res] {
	l, _ := f.Aux.(*Lease)
	f.Aux = nil
	b.held.Add(-1)
	b.releaseAsync(l)
	return out
}

// releaseAsync releases l (nil: nothing) on a goroutine of its own: a
// round trip never runs on the actor or on the goroutine of an outcome.
func (b *limitBehavior[Req, Res]) releaseAsync(l *Lease) {
	if l == nil {
		return
	}
	b.releasing.Add(1)
	go func() {
		_ = l.Release(context.Background()) // bounded by the Timeout option; should it fail, the lease expires
		if b.releasing.Add(-1) == 0 {
			b.st.Recheck() // a draining stage may stop now
		}
	}()
}

// Fail answers every request the stage holds with err, and cancels the
// acquisition under way (a lease it gets anyway is released).
func (b *limitBehavior[Req, Res]) Fail(s *stagekit.Stage[Req, Res], err error) {
	if a := b.cur; a != nil {
		a.cancel()
		if a.claimed.CompareAndSwap(false, true) {
			e := a.e
			a.e = nil
			s.Answer(e, err)
		}
	}
	for _, e := range b.queue {
		s.Answer(e, err)
	}
	b.queue = nil
}

// Idle reports whether the stage holds no request and releases no lease.
func (b *limitBehavior[Req, Res]) Idle() bool {
	return b.cur == nil && len(b.queue) == 0 && b.releasing.Load() == 0
}

// Dropped answers the request of an acquisition the stopped stage will
// never process, unless Fail did, and releases its lease.
func (b *limitBehavior[Req, Res]) Dropped(msg any, err error) {
	a, ok := msg.(*acquire[Req, Res])
	if !ok || a.b != b {
		return
	}
	b.releaseAsync(a.lease)
	if a.claimed.CompareAndSwap(false, true) {
		e := a.e
		a.e = nil
		b.st.Answer(e, err)
	}
}
