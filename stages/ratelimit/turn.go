package ratelimit

import (
	"context"
	"time"

	"github.com/troupe-go/troupe/actors/stagekit"
)

// A caller that would wait for its turn longer than it may is refused at
// once: its turn is the unit after those the stage keeps, plus one per
// request queued or waiting ahead of it; it may wait until its context's
// deadline (x/time/rate's Wait), and no longer than MaxWait.

// RefuseWait refuses a caller with ctx that would wait, behind ahead
// others, for a turn later than it may wait (stagekit.WaitGate). Only a
// Limited stage refuses: one that is not makes no caller wait for a unit.
func (b *behavior[Req, Res]) RefuseWait(ctx context.Context, ahead int) error {
	if _, ok := ctx.Deadline(); !ok && b.maxWait() == 0 {
		return nil
	}
	now := b.clock.Now()
	b.mu.Lock()
	if !b.limited {
		b.mu.Unlock()
		return nil
	}
	turn := b.lim.turn(now, len(b.kept)+ahead)
	b.mu.Unlock()
	return b.refusal(ctx, now, turn)
}

// refusal is the error refusing a caller with ctx whose turn comes at
// turn, or nil when it may wait for it.
func (b *behavior[Req, Res]) refusal(ctx context.Context, now, turn time.Time) error {
	if dl, ok := ctx.Deadline(); ok && dl.Before(turn) {
		return &LimitedError{RetryAfter: turn.Sub(now), deadline: true}
	}
	if b.maxWait() > 0 && turn.Sub(now) > b.maxWait() {
		return &LimitedError{RetryAfter: turn.Sub(now)}
	}
	return nil
}

// keep keeps e for a later unit (actor), unless its turn, behind those
// kept, comes later than its caller may wait: it is answered at once then.
func (b *behavior[Req, Res]) keep(s *stagekit.Stage[Req, Res], e *stagekit.Envelope[Req, Res]) {
	if _, ok := e.Ctx.Deadline(); ok || b.maxWait() != 0 {
		now := b.clock.Now()
		b.mu.Lock()
		turn := b.lim.turn(now, len(b.kept)+b.costOf(e)-1) // its own units past the first count too
		b.mu.Unlock()
		if err := b.refusal(e.Ctx, now, turn); err != nil {
			s.Answer(e, err)
			return
		}
	}
	b.mu.Lock()
	b.kept = append(b.kept, e)
	b.mu.Unlock()
}

// turn is when the unit k places after the next comes, for a Limited
// window: k/n windows after the current one ends.
func (w *window) turn(_ time.Time, k int) time.Time {
	return w.end().Add(time.Duration(k/w.n) * w.per)
}

// turn is when the unit k places after the next comes, for a Limited
// bucket: k intervals after the next is due.
func (g *gcra) turn(_ time.Time, k int) time.Time {
	return g.due().Add(time.Duration(k) * g.interval)
}
