package troupegrpc

import (
	"context"
	"errors"
	"io"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"

	"github.com/troupe-go/troupe"
)

// StreamClientInterceptor returns an interceptor that sends every stream
// call through svc, any troupe stack over the Invoke leaf (the unary
// interceptor's stack will do: a concurrency limit then counts calls and
// open streams together).
//
// NewStream reserves svc with the caller's context and returns once an
// attempt has opened a stream: a full limit makes it wait. The stack's
// call lasts as long as the stream, so the stream holds its permits for its
// whole life, and a Timeout in the stack bounds the whole stream. The
// stream is committed to an attempt, and never retried or hedged again,
// once that attempt has received the response header or the first
// response message (or ended), as gRPC commits its own retries; before
// that, a failed attempt goes to the stack's policy, and a new
// attempt is sent the messages the caller has sent so far, and CloseSend
// if it was called, before anything else (see the package doc). The
// error of the last RecvMsg is the stack's outcome, as the unary
// interceptor returns it, or, once the stream is committed, the committed
// attempt's own status as gRPC gave it; io.EOF when the stream ended
// well.
//
// The interceptor is safe for concurrent use. The streams it returns
// follow grpc.ClientStream's rules: one goroutine may send while another
// receives.
func StreamClientInterceptor(svc troupe.Service[*Call, Result], opts ...ClientOption) grpc.StreamClientInterceptor {
	cfg := newClientConfig(opts)
	return func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string,
		streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
		return streamCall(ctx, svc, cfg, desc, cc, method, streamer, opts)
	}
}

// streamCall opens a stream call through svc: the stream interceptor's
// work, and Conn's NewStream's (with no cc nor streamer: its leaf has a
// connection of its own).
func streamCall(ctx context.Context, svc troupe.Service[*Call, Result], cfg clientConfig, desc *grpc.StreamDesc,
	cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts []grpc.CallOption) (grpc.ClientStream, error) {
	switch {
	case svc == nil:
		return nil, toStatus(ErrNilService)
	case cfg.bad != nil:
		return nil, toStatus(cfg.bad)
	}
	if desc == nil {
		desc = &grpc.StreamDesc{}
	}
	s := &stream{
		ctx: ctx, desc: desc, cc: cc, method: method, streamer: streamer,
		opts: splitOpts(opts), limit: cfg.replayLimit,
		want: make(chan struct{}), first: make(chan struct{}), end: make(chan struct{}),
		changed: make(chan struct{}), opened: make(chan struct{}), done: make(chan struct{}),
	}
	c := &Call{method: method, kind: kindOf(desc), cc: cc, opts: s.opts.rest, st: s}
	go s.run(svc, c)
	select {
	case <-s.opened:
		return s, nil
	case <-s.done:
	}
	select {
	case <-s.opened:
		return s, nil
	default:
		return nil, s.final(nil)
	}
}

// stream is one stream call: the grpc.ClientStream its caller holds, and
// the state shared with the goroutine that runs the call through the stack
// (run) and with each attempt the stack sends (attempt.go).
type stream struct {
	// Set when made, then read-only.
	ctx      context.Context
	desc     *grpc.StreamDesc
	cc       *grpc.ClientConn
	method   string
	streamer grpc.Streamer // nil for Conn's: its leaf has a connection of its own
	opts     callOpts
	limit    int

	// sendMu orders what attempts are sent: the caller's SendMsg and
	// CloseSend, and a joining attempt's replay. It is taken before mu,
	// never while holding it.
	sendMu sync.Mutex

	mu       sync.Mutex
	live     []*attempt    // guarded by mu: attempts with a stream, not failed
	winner   *attempt      // guarded by mu: the attempt the stream is committed to
	last     bool          // guarded by mu: the next attempt to join is the winner
	sent     []any         // guarded by mu: what a joining attempt is sent first
	size     int           // guarded by mu: sent's bytes
	closed   bool          // guarded by mu: the caller called CloseSend
	sentLast bool          // guarded by mu: no more SendMsg
	recvType msgType       // guarded by mu: the caller's messages' type, set before want is closed
	asked    bool          // guarded by mu: want is closed
	want     chan struct{} // closed by the caller's first RecvMsg
	first    chan struct{} // closed when the winner's first receive is over
	firstMsg any           // guarded by mu: set before first is closed
	firstErr error         // guarded by mu: set before first is closed
	gotFirst bool          // guarded by mu: first is closed
	handed   bool          // guarded by mu: the caller took the first receive
	ended    bool          // guarded by mu: the caller has seen the stream end
	endErr   error         // guarded by mu: how it ended (nil: well)
	end      chan struct{} // closed when ended is set
	calls    int           // guarded by mu: the caller's calls under way on the winner
	idle     chan struct{} // guarded by mu: closed when calls drops to 0
	changed  chan struct{} // guarded by mu: closed and replaced when an attempt joins or wins
	opened   chan struct{} // closed when the first attempt joins
	isOpen   bool          // guarded by mu: opened is closed
	trailer  metadata.MD   // guarded by mu: the last failed attempt's trailer
	filled   bool          // guarded by mu: the caller's call options are filled
	isDone   bool          // guarded by mu: the stack's call returned
	doneErr  error         // guarded by mu: its error, set before done is closed
	done     chan struct{} // closed when isDone is set
}

// run sends the call through the stack, on a goroutine of its own: the
// stack's call lasts as long as the stream.
func (s *stream) run(svc troupe.Service[*Call, Result], c *Call) {
	_, err := troupe.Do(s.ctx, svc, c)
	s.mu.Lock()
	s.isDone, s.doneErr = true, err
	for _, a := range s.live {
		a.cancel() // the stack has its outcome: nothing is left to wait for
	}
	close(s.done)
	s.mu.Unlock()
}

// RecvMsg implements grpc.ClientStream.
func (s *stream) RecvMsg(m any) error {
	s.mu.Lock()
	if s.handed {
		w := s.winner
		s.calls++
		s.mu.Unlock()
		err := w.cs.RecvMsg(m)
		s.mu.Lock()
		last := err != nil || !s.desc.ServerStreams
		if last {
			s.endLocked(err)
		}
		s.leaveLocked()
		s.mu.Unlock()
		if !last {
			return nil
		}
		return s.final(err)
	}
	if !s.asked {
		s.asked, s.recvType = true, typeOf(m) // on the caller's goroutine: no attempt reads m
		close(s.want)
	}
	s.mu.Unlock()
	select {
	case <-s.first:
	case <-s.done:
	}
	s.mu.Lock()
	if !s.gotFirst {
		s.mu.Unlock()
		return s.final(nil)
	}
	s.handed = true
	msg, err := s.firstMsg, s.firstErr
	s.firstMsg = nil
	s.mu.Unlock()
	if err != nil {
		return s.final(err)
	}
	if err := copyMsg(m, msg); err != nil {
		return toStatus(err)
	}
	if s.desc.ServerStreams {
		return nil
	}
	return s.final(nil)
}

// final waits for the stack's outcome and returns it as the caller's last
// RecvMsg does, last being gRPC's error for that RecvMsg (nil after the
// one response of a call that is not server-streaming).
func (s *stream) final(last error) error {
	<-s.done
	s.fillOpts()
	s.mu.Lock()
	err, got, w, isEnded, endErr := s.doneErr, s.gotFirst, s.winner, s.ended, s.endErr
	s.mu.Unlock()
	if errors.Is(err, ErrCommitted) {
		// The stack's outcome is the committed attempt's, or that of an
		// attempt refused because the stream was committed or had ended:
		// the caller gets the stream's own, as gRPC gave it.
		switch {
		case w != nil:
			<-w.over // the stack has returned: the winner is ending, if not over
			err = w.out
		case isEnded:
			err = endErr
		}
		if err != nil && !errors.Is(err, ErrCommitted) {
			return err
		}
	}
	switch {
	case err != nil:
		return toStatus(err)
	case !got:
		return toStatus(ErrNoStream)
	case last == nil:
		return nil
	}
	return io.EOF
}

// fillOpts hands the caller's grpc.Header, grpc.Trailer and grpc.Peer
// options what the winner got, once the stream is over.
func (s *stream) fillOpts() {
	s.mu.Lock()
	if s.filled || len(s.opts.header)+len(s.opts.trailer)+len(s.opts.peer) == 0 {
		s.mu.Unlock()
		return
	}
	s.filled = true
	w, tr := s.winner, s.trailer
	s.mu.Unlock()
	var hd metadata.MD
	var p *peer.Peer
	if w != nil {
		<-w.headed
		hd = w.header
		tr = w.cs.Trailer()
		p, _ = peer.FromContext(w.cs.Context())
	}
	s.opts.fill(hd, tr, p)
}

// endLocked records that the caller has seen the stream end with err.
func (s *stream) endLocked(err error) {
	if s.ended {
		return
	}
	if err == io.EOF {
		err = nil
	}
	s.ended, s.endErr = true, err
	close(s.end)
}

// leaveLocked ends one of the caller's calls on the winner.
func (s *stream) leaveLocked() {
	s.calls--
	if s.calls == 0 && s.idle != nil {
		close(s.idle)
		s.idle = nil
	}
}

// changedLocked tells those waiting for an attempt to join or win.
func (s *stream) changedLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}
