package reconnect

import (
	"errors"
	"sync/atomic"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
)

// Messages from the connection actor and the proxy to the stage.
type (
	connectedMsg[Req, Res any] struct {
		svc troupe.Service[Req, Res]
		gen uint64
	}
	dialFailedMsg struct{ err error }
	restartedMsg  struct{}
	stoppedMsg    struct {
		last   error
		failed bool
	}
	connBrokenMsg struct {
		gen uint64
		err error
	}
)

// behavior is the stage's request side: it keeps the lifecycle state and
// the current connection, and sends requests to it. Fields marked "actor"
// belong to the stage's actor goroutine; the counters and state are atomics
// for observers.
type behavior[Req, Res any] struct {
	actors.Passthrough[Req, Res]
	st        *actors.Stage[Req, Res]
	conn      interface{ post(any) }
	closeConn func()
	idle      notConnected[Req, Res]
	onChange  func(from, to State)

	state                        atomic.Int32
	connects, failures, restarts atomic.Int64

	svc   troupe.Service[Req, Res] // actor; the current connection, or nil
	gen   uint64                   // actor; its dial's generation
	asked bool                     // actor; a connection was asked for and not answered yet
}

func (b *behavior[Req, Res]) set(to State) {
	from := State(b.state.Swap(int32(to)))
	if from != to && b.onChange != nil {
		b.onChange(from, to)
	}
}

// Request sends e to the connection, starting one when Idle: until it is
// made, e waits in the stage (RC2).
func (b *behavior[Req, Res]) Request(s *actors.Stage[Req, Res], e *actors.Envelope[Req, Res]) {
	if State(b.state.Load()) == Idle {
		b.connect()
	}
	s.Forward(e)
}

// connect asks the connection actor for a connection, once.
func (b *behavior[Req, Res]) connect() {
	if !b.asked {
		b.asked = true
		b.set(Connecting)
		b.conn.post(connectMsg{})
	}
}

// Control handles the lifecycle messages.
func (b *behavior[Req, Res]) Control(s *actors.Stage[Req, Res], msg any) {
	switch m := msg.(type) {
	case *connectedMsg[Req, Res]:
		b.asked = false
		b.svc, b.gen = m.svc, m.gen
		b.connects.Add(1)
		b.set(Connected)
		s.SetInner(newProxy(actors.AsInner(m.svc), m.gen, b.broken))
	case dialFailedMsg:
		// The request that waited for this connection gets its error; the
		// next one tries again, when the supervisor's backoff allows (RC3).
		b.asked = false
		b.failures.Add(1)
		b.set(Idle)
		s.AnswerParked(&ConnectError{Err: m.err})
	case connBrokenMsg:
		if m.gen == b.gen && b.svc != nil {
			b.failures.Add(1)
			b.discard()
			b.conn.post(brokenMsg{gen: m.gen, err: m.err})
			if s.Parked() {
				b.connect() // the parked request waits for the next connection (RC4)
			}
		}
	case restartedMsg:
		b.restarts.Add(1)
	case stoppedMsg:
		if m.failed {
			b.set(Failed)
			s.Break(m.last) // the supervisor gave up: for good (SUP2)
		}
	}
}

// discard drops the current connection (closing it) and goes Idle.
func (b *behavior[Req, Res]) discard() {
	if b.svc != nil {
		closeService(b.svc)
		b.svc = nil
	}
	b.st.SetInner(b.idle)
	b.set(Idle)
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
func (b *behavior[Req, Res]) restarted()           { b.st.PostControl(restartedMsg{}) }
func (b *behavior[Req, Res]) stopped(last error, failed bool) {
	b.st.PostControl(stoppedMsg{last: last, failed: failed})
}

// Fail runs when the stage restarts or stops. A restart discards the
// connection: calling it is what panicked. A stop ends the connection actor.
func (b *behavior[Req, Res]) Fail(_ *actors.Stage[Req, Res], err error) {
	if errors.Is(err, troupe.ErrRestarted) {
		if b.svc != nil {
			b.failures.Add(1)
			b.conn.post(brokenMsg{gen: b.gen, err: err})
			b.discard()
		}
		b.asked = false
		return
	}
	if b.svc != nil {
		closeService(b.svc)
		b.svc = nil
	}
	if State(b.state.Load()) != Failed {
		b.set(Closed)
	}
	b.closeConn()
}

// Dropped: the connection actor's late reports after the stage stopped.
func (b *behavior[Req, Res]) Dropped(msg any, _ error) {
	if m, ok := msg.(*connectedMsg[Req, Res]); ok {
		closeService(m.svc)
	}
}
