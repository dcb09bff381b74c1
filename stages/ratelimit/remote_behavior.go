package ratelimit

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors/stagekit"
)

// remoteBehavior is the stage's part of a rate limit kept by a Limiter
// outside the process. Its methods run on the stage's actor; the
// round trips run on goroutines of their own (ask.go), at most asks at
// once, and post their answers back as control messages.
//
// As in the local mode, while Limited the stage closes its mailbox's
// admission and pauses its intake, and its one alarm is set for when the
// limiter said to ask again. It also pauses its intake while as many asks
// as it may make run, so that requests wait in the bounded mailbox.
// NOTE: both switches belong to the actor (see behavior).
type remoteBehavior[Req, Res any] struct {
	stagekit.Passthrough[Req, Res]

	lim   Limiter // never changed
	asks  int     // most asks at once; never changed
	alarm *stagekit.Alarm
	clock stagekit.Clock
	rep   *stagekit.Reporter // the observer's (nil: none); set by attach

	mu      sync.Mutex
	limited bool      // guarded by mu; changed by the actor only
	until   time.Time // when the stage asks again while limited; guarded by mu; changed by the actor only

	// Owned by the actor.
	queue   []*stagekit.Envelope[Req, Res] // taken, not yet asked about, in order (refused ones first)
	pending map[*ask[Req, Res]]struct{}    // asks whose requests the stage holds
	running int                            // asks whose answer has not come back (pending, and those Fail let go)
	open    bool                           // the last answer said units are left: up to asks at once
}

func newRemoteBehavior[Req, Res any](lim Limiter, asks int) *remoteBehavior[Req, Res] {
	return &remoteBehavior[Req, Res]{lim: lim, asks: asks, clock: stagekit.NewClock(), pending: map[*ask[Req, Res]]struct{}{}}
}

// attach gives the behavior its stage's alarm; called once, right after
// the stage is spawned and before anyone can send it a request.
func (b *remoteBehavior[Req, Res]) attach(s *stagekit.Stage[Req, Res]) {
	b.alarm = s.NewAlarm(tick{})
	b.rep = s.Reporter()
}

// Request queues e and asks about what the stage may ask about now.
func (b *remoteBehavior[Req, Res]) Request(s *stagekit.Stage[Req, Res], e *stagekit.Envelope[Req, Res]) {
	b.queue = append(b.queue, e)
	b.pump(s)
}

// room is how many asks may run at once now: one after a refusal or a
// last unit, until an answer says that units are left.
func (b *remoteBehavior[Req, Res]) room() int {
	if b.open {
		return b.asks
	}
	return 1
}

// pump starts asks for the requests in line, in order, while the stage is
// not Limited and has room; it takes requests from its mailbox only while
// it has room left.
func (b *remoteBehavior[Req, Res]) pump(s *stagekit.Stage[Req, Res]) {
	for len(b.queue) > 0 && !b.limited && b.running < b.room() {
		e := b.pop()
		if err := e.Ctx.Err(); err != nil { // its caller gave up while it waited
			s.Answer(e, err)
			continue
		}
		b.start(s, e)
	}
	s.PauseRequests(b.limited || b.running >= b.room())
}

func (b *remoteBehavior[Req, Res]) pop() *stagekit.Envelope[Req, Res] {
	e := b.queue[0]
	b.queue[0] = nil
	b.queue = b.queue[1:]
	if len(b.queue) == 0 {
		b.queue = nil
	}
	return e
}

// Control handles the alarm and the answers of the asks.
func (b *remoteBehavior[Req, Res]) Control(s *stagekit.Stage[Req, Res], msg any) {
	switch m := msg.(type) {
	case tick:
		b.wake(s)
	case *ask[Req, Res]:
		if m.b == b {
			b.answered(s, m)
		}
	}
}

// answered acts on the answer of m: its request goes, waits first in line
// while the stage is Limited, or is answered with the limiter's error.
func (b *remoteBehavior[Req, Res]) answered(s *stagekit.Stage[Req, Res], m *ask[Req, Res]) {
	b.running--
	delete(b.pending, m)
	if m.claim() {
		e := m.e
		m.e = nil
		switch {
		case e.Ctx.Err() != nil:
			s.Answer(e, e.Ctx.Err()) // the caller gave up meanwhile
		case m.err != nil:
			s.Answer(e, fmt.Errorf("%w: %w", ErrLimiter, m.err))
		case m.ok:
			s.Forward(e)
		default:
			b.queue = append([]*stagekit.Envelope[Req, Res]{e}, b.queue...)
		}
	}
	b.open = m.err == nil && m.ok && m.retry <= 0
	switch {
	case m.err != nil:
	case !m.ok:
		b.limit(s, m.at.Add(max(m.retry, minRetry)))
	case m.retry > 0:
		b.limit(s, m.at.Add(m.retry))
	}
	b.pump(s)
}

// limit makes the stage Limited until until, or later if it already is.
func (b *remoteBehavior[Req, Res]) limit(s *stagekit.Stage[Req, Res], until time.Time) {
	b.mu.Lock()
	was := b.limited
	if !was || until.After(b.until) {
		b.until = until
	}
	b.limited = true
	until = b.until
	b.mu.Unlock()
	if !was && b.rep != nil {
		reportLimited(b.rep, true)
	}
	s.SetAdmission(false)
	b.alarm.Set(until) // armed earlier already: wake sets it again
}

// wake handles the alarm: once the time the limiter gave has come, the
// stage is ready again and asks about the first in line, alone.
func (b *remoteBehavior[Req, Res]) wake(s *stagekit.Stage[Req, Res]) {
	b.alarm.Fired()
	now := b.clock.Now()
	b.mu.Lock()
	limited, until := b.limited, b.until
	if limited && !now.Before(until) {
		b.limited = false
	}
	b.mu.Unlock()
	switch {
	case !limited: // a stale tick
	case now.Before(until):
		b.alarm.Set(until)
		return
	default:
		if b.rep != nil {
			reportLimited(b.rep, false)
		}
		s.SetAdmission(true)
		b.open = false
	}
	b.pump(s)
}

// Fail answers with err every request the stage holds, and cancels the
// asks under way. The Limited state survives a restart (a panic must not
// reset the rate); on a stop the alarm is disarmed.
func (b *remoteBehavior[Req, Res]) Fail(s *stagekit.Stage[Req, Res], err error) {
	for m := range b.pending {
		delete(b.pending, m)
		m.cancel()
		if m.claim() {
			e := m.e
			m.e = nil
			s.Answer(e, err)
		}
	}
	for len(b.queue) > 0 {
		s.Answer(b.pop(), err)
	}
	if !errors.Is(err, troupe.ErrRestarted) {
		b.alarm.Stop()
	}
}

// Idle reports whether the stage holds no request and no ask is under
// way: a closing stage waits for the asks' goroutines.
func (b *remoteBehavior[Req, Res]) Idle() bool { return len(b.queue) == 0 && b.running == 0 }

// Dropped answers the request of an answer the stopped stage will never
// process, unless Fail answered it already (it runs first when the stage
// stops, so this is a safety net).
func (b *remoteBehavior[Req, Res]) Dropped(msg any, err error) {
	m, ok := msg.(*ask[Req, Res])
	if !ok || m.b != b || !m.claim() {
		return
	}
	e := m.e
	m.e = nil
	m.s.Answer(e, err)
}

func (b *remoteBehavior[Req, Res]) snapshot() Snapshot {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := Snapshot{Limited: b.limited, Remaining: -1}
	if b.limited {
		s.Until, s.Remaining = b.until, 0
	}
	return s
}

// Detail is the stage's Stats' Detail: a Snapshot (stagekit.Detailer).
func (b *remoteBehavior[Req, Res]) Detail() any { return b.snapshot() }

func (b *remoteBehavior[Req, Res]) isLimited() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.limited
}
