package reconnect

import (
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors/stagekit"
)

// Messages from the connection actor and the proxy to the stage.
type (
	connectedMsg[Req, Res any] struct {
		svc troupe.Service[Req, Res]
		gen uint64
	}
	dialFailedMsg struct{ err error }
	restartedMsg  struct{ err error }
	stoppedMsg    struct {
		last   error
		failed bool
	}
	connBrokenMsg struct {
		gen uint64
		err error
	}
)

// connActor is the stage's view of its connection actor.
type connActor interface {
	post(msg any) // a connectMsg or a brokenMsg
	stop()        // stop for good
}

// behavior is the stage's request side: it keeps the lifecycle state and
// the current connection, and sends requests to it. Fields marked "actor"
// belong to the stage's actor goroutine; the counters and state are atomics
// for observers.
type behavior[Req, Res any] struct {
	stagekit.Passthrough[Req, Res]
	st       *stagekit.Stage[Req, Res]
	conn     connActor
	idle     notConnected[Req, Res]
	onChange func(from, to State)
	log      *slog.Logger

	state                        atomic.Int32
	connects, failures, restarts atomic.Int64

	svc   troupe.Service[Req, Res] // actor; the current connection, or nil
	gen   uint64                   // actor; its dial's generation
	asked bool                     // actor; a connection was asked for and not answered yet
	ended bool                     // actor; the connection actor stopped: no connection will come
}

// set moves to state to and tells OnStateChange, under stagekit.Guard,
// and the observer (EventStateChanged): it returns the panic of either, a
// *troupe.PanicError, for the request the change was made for (see
// unheard for changes no request waits for).
func (b *behavior[Req, Res]) set(to State) error {
	from := State(b.state.Swap(int32(to)))
	if from == to {
		return nil
	}
	var err error
	if b.onChange != nil {
		err = stagekit.Guard("reconnect: OnStateChange", func() { b.onChange(from, to) })
	}
	if r := b.st.Reporter(); r != nil {
		if perr := r.Report(troupe.Event{Type: troupe.EventStateChanged, From: from.String(), To: to.String()}); err == nil {
			err = perr
		}
	}
	return err
}

// unheard logs err, a panic of OnStateChange or of the observer that no
// request is told about.
func (b *behavior[Req, Res]) unheard(err error) {
	if err != nil {
		b.log.Error("reconnect: a state change's callback panicked", "stage", b.st.Name(), "err", err)
	}
}

// tell answers the request at the head of the line for a connection with
// err, if err is not nil; with no such request, err is logged.
func (b *behavior[Req, Res]) tell(s *stagekit.Stage[Req, Res], err error) {
	if err != nil && !s.AnswerParked(err) {
		b.unheard(err)
	}
}

// closedErr is what a request gets that waits for a connection that will
// not come: the stage is closing.
func (b *behavior[Req, Res]) closedErr() error { return &troupe.ClosedError{Service: b.st.Name()} }

// Request sends e to the connection, starting one when Idle: until it is
// made, e waits in the stage. Once the connection actor has stopped (the
// stage is closing), a request that would need a new connection gets a
// *troupe.ClosedError.
func (b *behavior[Req, Res]) Request(s *stagekit.Stage[Req, Res], e *stagekit.Envelope[Req, Res]) {
	if b.svc == nil {
		if b.ended {
			s.Answer(e, b.closedErr())
			return
		}
		if State(b.state.Load()) == Idle {
			if err := b.connect(); err != nil {
				s.Answer(e, err) // the connection is on its way all the same
				return
			}
		}
	}
	s.Forward(e)
}

// connect asks the connection actor for a connection, once; the error is
// OnStateChange's panic.
func (b *behavior[Req, Res]) connect() error {
	if b.asked {
		return nil
	}
	b.asked = true
	b.conn.post(connectMsg{})
	return b.set(Connecting)
}

// Control handles the lifecycle messages.
func (b *behavior[Req, Res]) Control(s *stagekit.Stage[Req, Res], msg any) {
	switch m := msg.(type) {
	case *connectedMsg[Req, Res]:
		b.asked = false
		b.svc, b.gen = m.svc, m.gen
		b.connects.Add(1)
		b.tell(s, b.set(Connected))
		s.SetInner(newProxy(stagekit.AsInner(m.svc), m.gen, b.broken))
	case dialFailedMsg:
		// The request that waited for this connection gets its error; the
		// next one tries again, when the supervisor's backoff allows.
		b.asked = false
		b.failures.Add(1)
		err := fmt.Errorf("%w: %w", ErrConnect, m.err)
		perr := b.set(Idle)
		if perr != nil {
			err = errors.Join(err, perr)
		}
		if !s.AnswerParked(err) {
			b.unheard(perr)
		}
	case connBrokenMsg:
		if m.gen == b.gen && b.svc != nil {
			b.failures.Add(1)
			err := b.discard()
			b.conn.post(brokenMsg{gen: m.gen, err: m.err})
			if s.Parked() {
				err = errors.Join(err, b.reconnect(s)) // the parked request waits for the next connection
			}
			b.tell(s, err)
		}
	case restartedMsg:
		b.restarts.Add(1)
		if r := s.Reporter(); r != nil {
			_ = r.Report(troupe.Event{Type: troupe.EventRestarted, Err: m.err}) // logged; no request to tell
		}
	case stoppedMsg:
		b.connEnded(s, m)
	}
}

// reconnect has the requests parked in s wait for a new connection, or,
// when none will come, answers them with a *troupe.ClosedError.
func (b *behavior[Req, Res]) reconnect(s *stagekit.Stage[Req, Res]) error {
	if !b.ended {
		return b.connect()
	}
	for s.AnswerParked(b.closedErr()) {
	}
	return nil
}

// connEnded handles the end of the connection actor: when the supervisor gave
// up, the stage is broken for good; when the stage is closing, no
// connection will come, so the requests waiting for one are answered now
// (those with a live connection drain through it).
func (b *behavior[Req, Res]) connEnded(s *stagekit.Stage[Req, Res], m stoppedMsg) {
	b.ended = true
	if m.failed {
		b.unheard(b.set(Failed))
		s.Break(m.last)
		return
	}
	if b.svc == nil {
		b.asked = false
		b.unheard(b.set(Closed))
		_ = b.reconnect(s)
	}
}

// discard drops the current connection (closing it) and goes Idle; the
// error is OnStateChange's panic.
func (b *behavior[Req, Res]) discard() error {
	if b.svc != nil {
		closeService(b.log, b.svc)
		b.svc = nil
	}
	b.st.SetInner(b.idle)
	return b.set(Idle)
}

// broken is the proxy's report, from any goroutine.
func (b *behavior[Req, Res]) broken(gen uint64, err error) {
	b.st.PostControl(connBrokenMsg{gen: gen, err: err})
}

// connected, dialFailed, restarted and stopped are the connection actor's
// reports, from its goroutine.
func (b *behavior[Req, Res]) connected(svc troupe.Service[Req, Res], gen uint64) {
	b.st.PostControl(&connectedMsg[Req, Res]{svc: svc, gen: gen})
}
func (b *behavior[Req, Res]) dialFailed(err error) { b.st.PostControl(dialFailedMsg{err: err}) }
func (b *behavior[Req, Res]) restarted(err error)  { b.st.PostControl(restartedMsg{err: err}) }
func (b *behavior[Req, Res]) stopped(last error, failed bool) {
	b.st.PostControl(stoppedMsg{last: last, failed: failed})
}

// Fail runs when the stage restarts or stops. A restart discards the
// connection: calling it is what panicked. A stop ends the connection actor.
// The requests the stage held are answered already, so a panic of
// OnStateChange here is only logged.
func (b *behavior[Req, Res]) Fail(s *stagekit.Stage[Req, Res], err error) {
	if s.Broken() {
		return // the calls on the connection finish first; the stop ends it
	}
	if errors.Is(err, troupe.ErrRestarted) {
		if b.svc != nil {
			b.failures.Add(1)
			b.conn.post(brokenMsg{gen: b.gen, err: err})
			b.unheard(b.discard())
		}
		b.asked = false
		return
	}
	if b.svc != nil {
		closeService(b.log, b.svc)
		b.svc = nil
	}
	if State(b.state.Load()) != Failed {
		b.unheard(b.set(Closed))
	}
	b.conn.stop()
}

// Dropped: the connection actor's late reports after the stage stopped.
func (b *behavior[Req, Res]) Dropped(msg any, _ error) {
	if m, ok := msg.(*connectedMsg[Req, Res]); ok {
		closeService(b.log, m.svc)
	}
}
