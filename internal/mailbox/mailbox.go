package mailbox

import (
	"errors"
	"fmt"
	"math"
	"sync/atomic"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/troupe-go/troupe"
)

// MaxCapacity is the largest capacity New accepts: the mailbox counts its
// slots in 32 bits. A mailbox's memory does not grow with its capacity, only
// with what it holds (its queue grows on demand), so an idle mailbox of
// MaxCapacity costs what an idle mailbox of 1 does.
const MaxCapacity = math.MaxInt32

var (
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
	stopped atomic.Bool   // q.stopped, for the run loop's checks without the lock
	wake    chan struct{} // one token per parked -> running transition
	invoker actor.MessageInvoker

	// Owned by the run loop goroutine.
	suspended  bool // protoactor's SuspendMailbox: only system messages run
	userPaused bool // the actor takes no user messages while its inner service is not ready
	active     bool // a user or control message has run: park, don't exit

	deferred []*Mailbox // posted to with PostFrom during the current message; owned by the run loop

	dropped  func(msg any, err error)
	panicked func(msg any, reason any)
	inline   int                // messages a poster may process on its own goroutine; 0: never
	direct   func(msg any) bool // see Direct
}

// Option configures a Mailbox.
//
// Options are plain values, safe for concurrent use.
type Option func(*Mailbox)

// OnDropped sets the function that answers messages the actor will never
// process: user and control messages still queued when the actor stops, or
// posted after it stopped. It runs on the stopping actor's goroutine or the
// poster's, and must not block.
func OnDropped(f func(msg any, err error)) Option { return func(m *Mailbox) { m.dropped = f } }

// OnPanic sets the function told about a panic in the actor, with the
// message being processed (nil for a system message) before the failure is
// escalated to the actor's supervisor (with the mailbox as the failure's
// message). It runs on the actor's goroutine.
func OnPanic(f func(msg any, reason any)) Option { return func(m *Mailbox) { m.panicked = f } }

// Direct sets a handler tried first for user and control messages, on the
// actor's goroutine: when it returns true the message was handled, without
// protoactor's per-message dispatch (its receive-timeout, metrics and
// middleware plumbing, none of which a stage uses). Messages it declines go
// to the actor as usual. System messages always go to protoactor.
func Direct(h func(msg any) bool) Option { return func(m *Mailbox) { m.direct = h } }

// Inline lets a poster that finds the actor idle run it on its own
// goroutine, for up to budget messages, instead of waking the actor's
// goroutine (see run.go). 0 turns it off.
func Inline(budget int) Option { return func(m *Mailbox) { m.inline = budget } }

// New returns a mailbox with room for size user messages, from 1 to
// MaxCapacity; any other size is a *troupe.ConfigError, never a
// capacity other than the one asked for.
func New(size int, opts ...Option) (*Mailbox, error) {
	if size < 1 || size > MaxCapacity {
		return nil, &troupe.ConfigError{Stage: "mailbox", Option: "Capacity", Value: size, Why: fmt.Sprintf("not between 1 and %d", MaxCapacity)}
	}
	m := &Mailbox{wake: make(chan struct{}, 1)}
	m.cap.size.Store(int32(size))
	for i, o := range opts {
		if o == nil {
			return nil, &troupe.ConfigError{Stage: "mailbox", Option: fmt.Sprintf("option %d of %d", i+1, len(opts)), Why: "nil"}
		}
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
//
// A plain value, safe for concurrent use.
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
		Capacity: int(m.cap.size.Load()),
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
	if m.inline > 0 {
		if done, err := m.postIdle(msg); done {
			return err
		}
	}
	if err := m.queueUser(msg); err != nil {
		return err
	}
	m.schedule()
	return nil
}

// PostFrom is Post for a message posted by the actor of mailbox from, on its
// goroutine, while it processes a message. When from's actor has more work
// waiting (queued messages, or reservations in its line), msg is queued and
// m's actor runs only once from's actor has been handed back, so that a
// request path crossing several busy stages is spread over the goroutines
// that post to them, one stage each at a time, instead of running nested on
// the goroutine that owns the first. Otherwise it is Post: an idle m runs
// at once, nested. Messages from one actor keep their order either way.
func (m *Mailbox) PostFrom(from *Mailbox, msg any) error {
	if from == nil || m.inline == 0 || (from.nuser.Load() == 0 && from.cap.nwait.Load() == 0) {
		return m.Post(msg)
	}
	if err := m.queueUser(msg); err != nil {
		return err
	}
	if n := len(from.deferred); n == 0 || from.deferred[n-1] != m {
		from.deferred = append(from.deferred, m)
	}
	return nil
}

// queueUser queues a user message, or frees its slot and returns the stop
// error once the actor has stopped.
func (m *Mailbox) queueUser(msg any) error {
	m.q.mu.Lock()
	if m.q.stopped {
		m.q.mu.Unlock()
		m.Free()
		return m.stopError()
	}
	m.q.user.push(msg)
	m.nuser.Add(1)
	m.q.mu.Unlock()
	return nil
}

// PostControl queues a control message: it needs no slot and is delivered
// even while user messages are paused. After the actor stopped it goes to
// the OnDropped function instead.
func (m *Mailbox) PostControl(msg any) { m.postTo(&m.q.control, &m.nctl, msg) }

// PostUrgent queues a control message that is delivered even while the
// actor is suspended by its supervisor (awaiting a delayed restart), ahead
// of other control messages: a stage's Close uses it to reach a failed
// stage. After the actor stopped it goes to the OnDropped function.
func (m *Mailbox) PostUrgent(msg any) { m.postTo(&m.q.urgent, &m.nurg, msg) }

// postTo queues msg on q (counted by n), or drops it once the actor stopped.
func (m *Mailbox) postTo(q *ring, n *atomic.Int32, msg any) {
	m.q.mu.Lock()
	if m.q.stopped {
		m.q.mu.Unlock()
		m.drop(msg, m.stopError())
		return
	}
	q.push(msg)
	n.Add(1)
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

// Running reports whether a goroutine owns the actor now (it is handling a
// message, or about to): one atomic load, from any goroutine.
func (m *Mailbox) Running() bool { return m.state.Load() == loopRunning }

// UserMessageCount implements actor.Mailbox.
func (m *Mailbox) UserMessageCount() int { return int(m.nuser.Load()) }

// WaitingCount reports how many reservations wait in line for a slot.
func (m *Mailbox) WaitingCount() int { return int(m.cap.nwait.Load()) }

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
	m.stopped.Store(true)
	msgs := m.q.user.drain()
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
