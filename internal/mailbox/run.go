package mailbox

import (
	"github.com/asynkron/protoactor-go/actor"
)

// The run loop. One goroutine at a time owns the actor: the state (loop*)
// says whether one does, and only a CompareAndSwap to loopRunning takes
// ownership. The owner is the actor's own goroutine, or (with Inline) a
// poster that found the actor idle: it runs the actor on its goroutine for
// a budget of messages, then hands it back (to no one, when the queues are
// empty; to the actor's goroutine, woken or started, when work remains).
// A stage's handler never blocks, and an actor cannot be entered twice
// while running, so a request passing idle stages crosses no goroutine at
// all: posting to the next stage runs it, nested, until the leaf hands the
// call back to its caller. A post that finds the actor idle with nothing
// queued skips the queue too (postIdle).
//
// Nesting serialises, though: while a goroutine runs the second stage
// nested, it still owns the first, and under load every request's whole
// path would run on whichever goroutine owns the first stage. So an actor
// with more work waiting (PostFrom) queues what it posts, and the target
// runs only once the poster's actor has been handed back: the goroutines
// that carry requests then work on different stages at once, one stage
// each, like a pipeline. See docs/decisions.md for the measurements.

// schedule makes sure the run loop will look at the queues.
func (m *Mailbox) schedule() {
	for {
		switch s := m.state.Load(); s {
		case loopRunning, loopStopped:
			return
		case loopParked:
			if m.state.CompareAndSwap(s, loopRunning) {
				if m.inline > 0 {
					m.runInline(true, nil)
				} else {
					m.wake <- struct{}{}
				}
				return
			}
		case loopIdle:
			if m.state.CompareAndSwap(s, loopRunning) {
				if m.inline > 0 {
					m.runInline(false, nil)
				} else {
					go m.run()
				}
				return
			}
		}
	}
}

// postIdle is Post's fast path (with Inline): when the actor is idle and
// nothing waits in its queues, the poster takes the actor and processes msg
// at once, without queueing it (no lock, no ring), then goes on as
// runInline. It reports false, having changed nothing, when the actor is
// busy or has queued work: msg must be queued then.
func (m *Mailbox) postIdle(msg any) (bool, error) {
	s := m.state.Load()
	if s != loopIdle && s != loopParked {
		return false, nil
	}
	if m.nsys.Load() > 0 || m.nurg.Load() > 0 || m.nctl.Load() > 0 || m.nuser.Load() > 0 {
		return false, nil
	}
	if !m.state.CompareAndSwap(s, loopRunning) {
		return false, nil
	}
	// The actor is ours, and its flags may be read. A message queued between
	// the counters' check and the CAS was posted concurrently with msg, so
	// either order is FIFO; it runs after msg.
	if m.suspended || m.userPaused || m.isStopped() {
		// msg may not run now: queue it, and let runInline hand the actor
		// back as usual.
		err := m.queueUser(msg)
		m.runInline(s == loopParked, nil)
		return true, err
	}
	m.runInline(s == loopParked, msg)
	return true, nil
}

// runInline runs the actor on the poster's goroutine, which owns it, for up
// to m.inline messages, then hands it back. parked says whether the actor's
// own goroutine exists (parked on wake) or not.
func (m *Mailbox) runInline(parked bool, first any) {
	for {
		budget := m.inline
		m.drain(&budget, first)
		first = nil
		// The actors it posted to with PostFrom run once this one is handed
		// back: take the list while the actor is still ours.
		var buf [4]*Mailbox
		after := append(buf[:0], m.deferred...)
		clear(m.deferred)
		m.deferred = m.deferred[:0]
		if m.isStopped() {
			m.state.Store(loopStopped)
			if parked {
				m.wake <- struct{}{} // let it see the stop and exit
			}
			scheduleAll(after)
			return
		}
		suspended, paused := m.suspended, m.userPaused
		if budget == 0 && m.hasWork(suspended, paused) {
			// Work remains: the actor's goroutine takes over.
			if parked {
				m.wake <- struct{}{}
			} else {
				go m.run()
			}
			scheduleAll(after)
			return
		}
		next := loopIdle
		if parked {
			next = loopParked
		}
		m.state.Store(next)
		scheduleAll(after)
		if !m.hasWork(suspended, paused) || !m.state.CompareAndSwap(next, loopRunning) {
			return
		}
	}
}

// scheduleAll makes sure the run loops of ms look at their queues.
func scheduleAll(ms []*Mailbox) {
	for i, d := range ms {
		ms[i] = nil
		d.schedule()
	}
}

func (m *Mailbox) isStopped() bool { return m.state.Load() == loopStopped || m.stopped.Load() }

// hasWork reports whether the run loop has a message it may process now,
// given whether it is suspended and whether user messages are paused.
func (m *Mailbox) hasWork(suspended, userPaused bool) bool {
	if m.nsys.Load() > 0 || m.nurg.Load() > 0 {
		return true
	}
	if suspended {
		return false
	}
	return m.nctl.Load() > 0 || (!userPaused && m.nuser.Load() > 0)
}

// run is the actor's goroutine: it processes messages until there are none,
// then parks, or exits when the actor never had real work or has stopped.
func (m *Mailbox) run() {
	for {
		budget := -1
		m.drain(&budget, nil)
		if len(m.deferred) > 0 {
			// Posted to with PostFrom: run them now, on this goroutine (the
			// actor stays ours; its own goroutine never hands it back
			// between messages).
			scheduleAll(m.deferred)
			m.deferred = m.deferred[:0]
			continue
		}
		if m.isStopped() {
			m.state.Store(loopStopped)
			return
		}
		if m.idle() {
			return
		}
	}
}

// idle parks the goroutine until there is work; it reports true when the
// goroutine should exit instead.
func (m *Mailbox) idle() bool {
	// The flags are the actor's: read them now. Once the state says idle or
	// parked, a poster may hand the actor to another goroutine, and this one
	// must touch nothing of the actor's any more.
	suspended, paused := m.suspended, m.userPaused
	next := loopParked
	if !m.active {
		next = loopIdle // spawned but never used: hold no goroutine
	}
	m.state.Store(next)
	if m.hasWork(suspended, paused) && m.state.CompareAndSwap(next, loopRunning) {
		return false
	}
	if next == loopIdle {
		// Either nothing came, or a poster moved the state to running and
		// started another goroutine: both mean this one ends.
		return true
	}
	<-m.wake // a poster moved the state to running and sends one token
	return false
}

// Queue a message came from.
const (
	kindNone = iota
	kindSystem
	kindControl
	kindUser
)

// next pops the next message the actor may process.
func (m *Mailbox) next() (any, int) {
	if !m.hasWork(m.suspended, m.userPaused) {
		// Nothing queued that may run now: no need to lock. A message
		// counted after this check is seen by the run loop's check before
		// it hands the actor back (see runInline and idle).
		return nil, kindNone
	}
	m.q.mu.Lock()
	defer m.q.mu.Unlock()
	switch {
	case m.q.system.len() > 0:
		m.nsys.Add(-1)
		return m.q.system.pop(), kindSystem
	case m.q.stopped:
		return nil, kindNone
	case m.q.urgent.len() > 0:
		m.nurg.Add(-1)
		return m.q.urgent.pop(), kindControl
	case m.suspended:
		return nil, kindNone
	case m.q.control.len() > 0:
		m.nctl.Add(-1)
		return m.q.control.pop(), kindControl
	case !m.userPaused && m.q.user.size > 0:
		m.nuser.Add(-1)
		return m.q.user.pop(), kindUser
	}
	return nil, kindNone
}

// drain processes first (a user message not queued; nil for none), then
// messages until none may run, or *budget of them (a negative budget has no
// limit), or until one has posted with PostFrom (the run loop then runs the
// targets). A panic is told to OnPanic with the message being processed,
// then escalated to the actor's supervisor with the mailbox itself as the
// failure's message (protoactor's Failure.Message), so that the supervisor
// can restart or stop the actor through its mailbox without looking it up;
// the mailbox stays suspended until it does.
func (m *Mailbox) drain(budget *int, first any) {
	var msg any
	defer func() {
		if r := recover(); r != nil {
			if m.panicked != nil {
				m.panicked(msg, r)
			}
			m.invoker.EscalateFailure(r, m)
		}
	}()
	for *budget != 0 {
		kind := kindUser
		if first == nil {
			msg, kind = m.next()
		} else {
			msg, first = first, nil
		}
		switch kind {
		case kindNone:
			return
		case kindSystem:
			switch msg.(type) {
			case *actor.SuspendMailbox:
				m.suspended = true
			case *actor.ResumeMailbox:
				m.suspended = false
			default:
				m.invoker.InvokeSystemMessage(msg)
			}
		default:
			m.active = true
			if m.direct == nil || !m.direct(msg) {
				m.invoker.InvokeUserMessage(msg)
			}
		}
		msg = nil
		if *budget > 0 {
			*budget--
		}
		if len(m.deferred) > 0 {
			return // run the actors it posted to (see PostFrom)
		}
	}
}
