package stagekit

import (
	"sync"
	"time"
)

// Alarm is a stage's one timer, reused for every deadline it watches (no
// timer per request): when the time it is set to passes, it posts
// its message to the stage as a control message, so the stage handles the
// event on its own goroutine, even while it takes no requests.
//
// An Alarm is safe for concurrent use. A stale firing (the alarm was set
// again meanwhile) still posts the message: handlers look at the time and
// their own state, never at the firing alone.
type Alarm struct {
	mu   sync.Mutex
	t    *time.Timer // guarded by mu
	at   time.Time   // when the timer is due, zero when not armed; guarded by mu
	fire func()
}

// NewAlarm returns an alarm that posts msg to s. It holds no timer until Set.
func (s *Stage[Req, Res]) NewAlarm(msg any) *Alarm {
	return &Alarm{fire: func() { s.mb.PostControl(msg) }}
}

// Set arms the alarm for at, unless it is already armed for an earlier or
// equal time (the handler sets it again for the next deadline).
func (a *Alarm) Set(at time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.at.IsZero() && !at.Before(a.at) {
		return
	}
	a.at = at
	d := time.Until(at)
	if a.t == nil {
		a.t = time.AfterFunc(d, a.fire)
		return
	}
	a.t.Reset(d)
}

// Fired tells the alarm that its message arrived: it is no longer armed.
func (a *Alarm) Fired() {
	a.mu.Lock()
	a.at = time.Time{}
	a.mu.Unlock()
}

// Stop disarms the alarm.
func (a *Alarm) Stop() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.at = time.Time{}
	if a.t != nil {
		a.t.Stop()
	}
}

// PauseRequests stops (true) or resumes (false) the stage's intake of
// requests from its mailbox; control messages keep flowing. A behavior that
// keeps a request until some event (a rate limiter waiting for its window)
// pauses meanwhile, so that work waits in the bounded mailbox.
// The stage also pauses by itself while it parks a request for its inner
// service; it takes requests only when neither holds. A broken stage (see
// Broken) takes them whatever its behavior asks, to answer them. Actor
// goroutine only.
func (s *Stage[Req, Res]) PauseRequests(p bool) {
	s.paused = p
	s.mb.SetUserPaused((s.paused || s.parked != nil) && s.closing < broken)
}

// Post posts the alarm's message now, whether or not the alarm is armed,
// and leaves its timer as it is: for a behavior whose state changed
// outside the actor (a rate set anew) and that the actor must look at.
// Safe anywhere.
func (a *Alarm) Post() { a.fire() }
