package mailbox

import (
	"errors"
	"runtime"
	"sync/atomic"

	"github.com/asynkron/protoactor-go/actor"
)

var (
	// ErrBadCapacity is returned by New for a capacity below 1.
	ErrBadCapacity = errors.New("mailbox: capacity must be at least 1")
	// ErrStopped is returned by Post once the mailbox's actor has stopped and
	// the mailbox was not closed with an error of its own.
	ErrStopped    = errors.New("mailbox: stopped")
	errWaiterBusy = errors.New("mailbox: waiter is already waiting")
)

// Run-loop states.
const (
	loopIdle    int32 = iota // no goroutine; the next message starts one
	loopRunning              // the goroutine is processing
	loopParked               // the goroutine is blocked on wake
	loopStopped              // the actor stopped; nothing runs again
)

// Mailbox is a bounded, reserving actor.Mailbox. Create it with New and give
// it to the actor's props with Producer. All its methods are safe for
// concurrent use, except SetUserPaused and Stop, which belong to the actor
// (call them only from its Receive).
type Mailbox struct {
	cap capacity
	q   queues

	// Counts of queued messages: written under q.mu, read by the idle check.
	nsys, nurg, nctl, nuser atomic.Int32

	state   atomic.Int32  // loop*; see schedule and park
	wake    chan struct{} // one token per parked -> running transition
	invoker actor.MessageInvoker

	// Owned by the run loop goroutine.
	suspended  bool // protoactor's SuspendMailbox: only system messages run
	userPaused bool // the actor takes no user messages (SPEC ACT3)
	active     bool // a user or control message has run: park, don't exit

	dropped  func(msg any, err error)
	panicked func(msg any, reason any)
	spin     int
}

// Option configures a Mailbox.
type Option func(*Mailbox)

// OnDropped sets the function that answers messages the actor will never
// process: user and control messages still queued when the actor stops, or
// posted after it stopped. It runs on the stopping actor's goroutine or the
// poster's, and must not block.
func OnDropped(f func(msg any, err error)) Option { return func(m *Mailbox) { m.dropped = f } }

// OnPanic sets the function told about a panic in the actor, with the
// message being processed (nil for a system message) before the failure is
// escalated to the actor's supervisor. It runs on the actor's goroutine.
func OnPanic(f func(msg any, reason any)) Option { return func(m *Mailbox) { m.panicked = f } }

// Spin sets how many times the idle run loop yields before it parks (default
// 0). On a loaded machine a short spin saves a park and wake per message.
func Spin(n int) Option { return func(m *Mailbox) { m.spin = n } }

// New returns a mailbox with room for size user messages.
func New(size int, opts ...Option) (*Mailbox, error) {
	if size < 1 {
		return nil, ErrBadCapacity
	}
	m := &Mailbox{wake: make(chan struct{}, 1)}
	m.cap.size = int32(size)
	m.q.user.buf = make([]any, size)
	for _, o := range opts {
		o(m)
	}
	return m, nil
}

// Producer returns a MailboxProducer that hands out m, for actor.WithMailbox.
// A mailbox belongs to one actor: spawn only once with it.
func (m *Mailbox) Producer() actor.MailboxProducer {
	return func() actor.Mailbox { return m }
}

// Stats is a snapshot of a mailbox's counters.
type Stats struct {
	Capacity int // user slots
	Used     int // slots reserved, queued or held by the actor
	Queued   int // user messages waiting for the actor
	Control  int // control messages waiting for the actor
	Waiting  int // reservations waiting for a slot
}

// Stats returns the current counters. They are read one by one, so under
// load they may not add up exactly.
func (m *Mailbox) Stats() Stats {
	return Stats{
		Capacity: int(m.cap.size),
		Used:     int(m.cap.used.Load()),
		Queued:   int(m.nuser.Load()),
		Control:  int(m.nctl.Load()),
		Waiting:  int(m.cap.nwait.Load()),
	}
}

// Post queues a user message in a slot reserved before. When the actor has
// stopped, the slot is freed and Post returns the close error (or
// ErrStopped): the message was not queued and the caller answers it.
func (m *Mailbox) Post(msg any) error {
	m.q.mu.Lock()
	if m.q.stopped {
		m.q.mu.Unlock()
		m.Free()
		return m.stopError()
	}
	m.q.user.push(msg)
	m.nuser.Add(1)
	m.q.mu.Unlock()
	m.schedule()
	return nil
}

// PostControl queues a control message: it needs no slot and is delivered
// even while user messages are paused. After the actor stopped it goes to
// the OnDropped function instead.
func (m *Mailbox) PostControl(msg any) {
	m.q.mu.Lock()
	if m.q.stopped {
		m.q.mu.Unlock()
		m.drop(msg, m.stopError())
		return
	}
	m.q.control.push(msg)
	m.nctl.Add(1)
	m.q.mu.Unlock()
	m.schedule()
}

// PostUrgent queues a control message that is delivered even while the
// actor is suspended by its supervisor (awaiting a delayed restart), ahead
// of other control messages: a stage's Close uses it to reach a failed
// stage. After the actor stopped it goes to the OnDropped function.
func (m *Mailbox) PostUrgent(msg any) {
	m.q.mu.Lock()
	if m.q.stopped {
		m.q.mu.Unlock()
		m.drop(msg, m.stopError())
		return
	}
	m.q.urgent.push(msg)
	m.nurg.Add(1)
	m.q.mu.Unlock()
	m.schedule()
}

// PostUserMessage implements actor.Mailbox. Messages sent through a PID
// bypass reservations, so they are queued as control messages: no capacity
// is spent and none is checked.
func (m *Mailbox) PostUserMessage(msg any) { m.PostControl(msg) }

// PostSystemMessage implements actor.Mailbox.
func (m *Mailbox) PostSystemMessage(msg any) {
	m.q.mu.Lock()
	if m.q.stopped {
		m.q.mu.Unlock()
		return
	}
	m.q.system.push(msg)
	m.nsys.Add(1)
	m.q.mu.Unlock()
	m.schedule()
}

// RegisterHandlers implements actor.Mailbox. The dispatcher is not used: the
// mailbox runs its actor on its own goroutine.
func (m *Mailbox) RegisterHandlers(invoker actor.MessageInvoker, _ actor.Dispatcher) {
	m.invoker = invoker
}

// Start implements actor.Mailbox. The run loop starts with the first message.
func (m *Mailbox) Start() {}

// UserMessageCount implements actor.Mailbox.
func (m *Mailbox) UserMessageCount() int { return int(m.nuser.Load()) }

// SetUserPaused pauses or resumes delivery of user messages; system and
// control messages keep flowing. Call it only from the actor's Receive.
func (m *Mailbox) SetUserPaused(p bool) { m.userPaused = p }

// Stop ends the mailbox: admission closes (with ErrStopped unless Close set
// an error before), queued user and control messages go to the OnDropped
// function, later posts are refused, and the run loop exits once the current
// message returns. Call it only from the actor's Receive, on *actor.Stopped.
func (m *Mailbox) Stop() {
	m.Close(ErrStopped)
	m.q.mu.Lock()
	m.q.stopped = true
	var msgs []any
	for m.q.user.size > 0 {
		msgs = append(msgs, m.q.user.pop())
	}
	msgs = append(msgs, m.q.urgent.drain()...)
	msgs = append(msgs, m.q.control.drain()...)
	m.q.system.drain()
	m.nurg.Store(0)
	m.nuser.Store(0)
	m.nctl.Store(0)
	m.nsys.Store(0)
	m.q.mu.Unlock()
	err := m.stopError()
	for _, msg := range msgs {
		m.drop(msg, err)
	}
}

func (m *Mailbox) stopError() error {
	if err := m.closeError(); err != nil {
		return err
	}
	return ErrStopped
}

func (m *Mailbox) drop(msg any, err error) {
	if m.dropped != nil {
		m.dropped(msg, err)
	}
}

// schedule makes sure the run loop will look at the queues.
func (m *Mailbox) schedule() {
	for {
		switch s := m.state.Load(); s {
		case loopRunning, loopStopped:
			return
		case loopParked:
			if m.state.CompareAndSwap(s, loopRunning) {
				m.wake <- struct{}{}
				return
			}
		case loopIdle:
			if m.state.CompareAndSwap(s, loopRunning) {
				go m.run()
				return
			}
		}
	}
}

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
		m.drain()
		m.q.mu.Lock()
		stopped := m.q.stopped
		m.q.mu.Unlock()
		if stopped {
			m.state.Store(loopStopped)
			return
		}
		if m.idle() {
			return
		}
	}
}

// idle waits for work after a spin; it reports true when the goroutine
// should exit instead.
func (m *Mailbox) idle() bool {
	// The flags are the actor's: read them now. Once the state says idle or
	// parked, a poster may hand the actor to another goroutine, and this one
	// must touch nothing of the actor's any more.
	suspended, paused := m.suspended, m.userPaused
	for range m.spin {
		runtime.Gosched()
		if m.hasWork(suspended, paused) {
			return false
		}
	}
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

// drain processes messages until none may run. A panic is told to OnPanic
// with the message being processed, then escalated to the actor's
// supervisor, which suspends the mailbox until it restarts or stops the actor.
func (m *Mailbox) drain() {
	var msg any
	defer func() {
		if r := recover(); r != nil {
			if m.panicked != nil {
				m.panicked(msg, r)
			}
			m.invoker.EscalateFailure(r, msg)
		}
	}()
	for {
		var kind int
		msg, kind = m.next()
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
			m.invoker.InvokeUserMessage(msg)
		}
		msg = nil
	}
}
