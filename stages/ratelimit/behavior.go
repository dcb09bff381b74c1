package ratelimit

import (
	"errors"
	"sync"
	"time"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors/stagekit"
)

// tick is the alarm's message: the limiter may have a unit again. A stale
// tick is harmless: the handler looks at the time and the limiter's state.
type tick struct{}

// behavior is the stage's part of a rate limit. Its methods run on the
// stage's actor goroutine; the limiter is shared with observers under mu.
//
// While the limiter is Limited the stage closes its mailbox's admission (so
// reservations wait, and TryReserve reports not ready to a LoadShed above)
// and pauses its intake (requests already reserved or queued wait in the
// mailbox for the next unit); the alarm is set for when that unit comes.
// NOTE: both switches belong to the actor (stagekit.Stage.PauseRequests,
// stagekit.Stage.SetAdmission): only spend and Control flip them.
type behavior[Req, Res any] struct {
	stagekit.Passthrough[Req, Res]

	// alarm is the stage's one timer, made once by attach and reset for
	// every window or spacing interval, never replaced: no timer
	// is allocated per window or per request. Safe for concurrent use.
	alarm *stagekit.Alarm
	clock stagekit.Clock // made with the stage

	mu      sync.Mutex
	lim     limiter // guarded by mu; changed by the actor only
	limited bool    // guarded by mu; changed by the actor only
	wakes   int32   // alarm messages handled; guarded by mu (tests)
	// opts holds the options that change the behavior's rules (MaxWait,
	// Cost); nil without them. Set at construction, never changed.
	opts *options[Req]

	// kept holds, in order, requests that reached Request while Limited.
	// The stage pauses its intake while Limited, so this stays empty unless
	// intake resumed behind the limiter's back; such requests are not lost
	// or sent early: they go, first, once units come back (one whose caller
	// gave up meanwhile is answered then, spending nothing). Changed by the
	// actor only, under mu (RefuseWait counts it).
	kept []*stagekit.Envelope[Req, Res]
}

func newBehavior[Req, Res any](lim limiter) *behavior[Req, Res] {
	return &behavior[Req, Res]{lim: lim, clock: stagekit.NewClock()}
}

// attach gives the behavior its stage's alarm; called once, right after
// the stage is spawned and before anyone can send it a request.
func (b *behavior[Req, Res]) attach(s *stagekit.Stage[Req, Res]) {
	b.alarm = s.NewAlarm(tick{})
}

// Request spends a unit for e and forwards it, or keeps it while Limited.
func (b *behavior[Req, Res]) Request(s *stagekit.Stage[Req, Res], e *stagekit.Envelope[Req, Res]) {
	n := 1
	if b.opts != nil && b.opts.cost != nil {
		if n = b.opts.cost(e.Req); !b.affords(n) {
			s.Answer(e, b.costError(n))
			return
		}
	}
	if len(b.kept) > 0 { // still Limited: those kept before go first
		b.keep(s, e)
		s.PauseRequests(true)
		return
	}
	if !b.spend(s, b.clock.Now(), n) {
		b.keep(s, e)
		return
	}
	s.Forward(e)
}

// AdmitOnCaller spends a unit for a request crossing the stage on its
// caller's goroutine, when one is left after it; the last unit, and the
// Limited state it brings, are the actor's to spend (in Request).
func (b *behavior[Req, Res]) AdmitOnCaller() bool {
	now := b.clock.Now()
	b.mu.Lock()
	ok := !b.limited && b.lim.takeSpare(now)
	b.mu.Unlock()
	return ok
}

// spend takes n units at now and reports whether it got them. When no unit
// is left after it (the call that spent the last unit still goes), or
// there was none, the stage goes Limited until the next unit comes.
func (b *behavior[Req, Res]) spend(s *stagekit.Stage[Req, Res], now time.Time, n int) bool {
	b.mu.Lock()
	ok := b.lim.takeN(now, n)
	until, limited := b.lim.limitedUntil(now)
	if !ok {
		until, limited = b.lim.readyAt(now, n), true
	}
	was := b.limited
	b.limited = limited
	b.mu.Unlock()
	if was != limited {
		reportLimited(s.Reporter(), limited)
	}
	if limited {
		s.SetAdmission(false)
		s.PauseRequests(true)
		b.alarm.Set(until)
	}
	return ok
}

// Control handles the alarm: the kept requests go while units are left,
// then, unless the limiter is Limited again, reservations and intake open.
func (b *behavior[Req, Res]) Control(s *stagekit.Stage[Req, Res], msg any) {
	if _, ok := msg.(tick); !ok {
		return
	}
	b.alarm.Fired()
	now := b.clock.Now()
	b.mu.Lock()
	b.wakes++
	b.lim.wake(now)
	b.mu.Unlock()
	for len(b.kept) > 0 {
		e := b.kept[0]
		if err := e.Ctx.Err(); err != nil { // its caller gave up: no unit spent
			b.popKept()
			s.Answer(e, err)
			continue
		}
		if !b.spend(s, now, b.costOf(e)) {
			return // Limited again; the alarm is set
		}
		b.popKept()
		s.Forward(e)
	}
	b.mu.Lock()
	until, limited := b.lim.limitedUntil(now)
	was := b.limited
	b.limited = limited
	b.mu.Unlock()
	if was != limited {
		reportLimited(s.Reporter(), limited)
	}
	if limited { // the last kept request spent the last unit, a stale tick, or a slower rate
		s.SetAdmission(false)
		s.PauseRequests(true)
		b.alarm.Set(until)
		return
	}
	s.SetAdmission(true)
	s.PauseRequests(false)
}

// reportLimited tells the stage's observer, rep (nil: none), that the
// stage went Limited, or ready again (EventStateChanged, on the actor). A
// panic in it is logged: the calls go on.
func reportLimited(rep *stagekit.Reporter, limited bool) {
	if rep == nil {
		return
	}
	ev := troupe.Event{Type: troupe.EventStateChanged, From: "ready", To: "limited"}
	if !limited {
		ev.From, ev.To = ev.To, ev.From
	}
	_ = rep.Report(ev)
}

func (b *behavior[Req, Res]) popKept() {
	b.mu.Lock()
	b.kept[0] = nil
	b.kept = b.kept[1:]
	if len(b.kept) == 0 {
		b.kept = nil
	}
	b.mu.Unlock()
}

// Fail answers the kept requests with err. The limiter keeps its state
// across a restart (a panic must not reset the rate); on a stop the alarm
// is disarmed.
func (b *behavior[Req, Res]) Fail(s *stagekit.Stage[Req, Res], err error) {
	b.mu.Lock()
	kept := b.kept
	b.kept = nil
	b.mu.Unlock()
	for _, e := range kept {
		s.Answer(e, err)
	}
	if !errors.Is(err, troupe.ErrRestarted) {
		b.alarm.Stop()
	}
}

// Idle reports whether no request is kept.
func (b *behavior[Req, Res]) Idle() bool { return len(b.kept) == 0 }

// snapshot returns the limiter's state at now.
func (b *behavior[Req, Res]) snapshot(now time.Time) Snapshot {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := b.lim.snapshot(now)
	s.Limited = b.limited
	return s
}

// Detail is the stage's Stats' Detail: a Snapshot (stagekit.Detailer).
func (b *behavior[Req, Res]) Detail() any { return b.snapshot(time.Now()) }

func (b *behavior[Req, Res]) isLimited() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.limited
}
