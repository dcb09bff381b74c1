package troupegrpc

import (
	"context"
	"io"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/emptypb"
)

// attempt is one stream the stack opened for a stream call.
type attempt struct {
	cancel context.CancelFunc // cancels cs; set when made; safe for concurrent use
	cs     grpc.ClientStream  // set before the attempt joins the stream, then read-only
	broken bool               // guarded by stream.sendMu: a send failed, send no more
	header metadata.MD        // its stream's header, nil when it ended without one; set before headed is closed
	headed chan struct{}      // closed once header is known
	out    error              // its own outcome as the caller gets it (nil: the stream ended well); set before over is closed
	over   chan struct{}      // closed when the attempt returns
}

// stop cancels the attempt (see flight).
func (a *attempt) stop() { a.cancel() }

// errConnGone is a committed stream's outcome when gRPC ended it without
// its caller seeing the end (the connection was closed).
var errConnGone = status.Error(codes.Canceled, "troupegrpc: the stream ended before its caller read its status")

// attempt is the Invoke leaf's work for a stream call: it opens a stream
// (on the connection on, InvokeOn's, or else with the interceptor's
// streamer), joins it to the call (sending it what the caller has sent),
// waits for its header, receives the first response message when the
// caller asks for one, and, if it wins, lasts until the stream ends.
func (s *stream) attempt(ctx context.Context, c *Call, on grpc.ClientConnInterface) (Result, error) {
	s.mu.Lock()
	refused := s.refusedLocked()
	s.mu.Unlock()
	if refused {
		return Result{}, ErrCommitted
	}
	actx, cancel := context.WithCancel(ctx)
	defer cancel()
	a := &attempt{cancel: cancel, headed: make(chan struct{}), over: make(chan struct{})}
	defer close(a.over)
	if res, err, ok := c.fl.enter(a); !ok {
		return res, err
	}
	res, err := s.try(ctx, actx, a, c, on)
	res, err = c.fl.leave(a, res, err)
	a.out = err
	if ce, ok := err.(*committedError); ok {
		a.out = ce.err
	}
	return res, err
}

// try is an attempt's life, from opening its stream to its outcome.
func (s *stream) try(ctx, actx context.Context, a *attempt, c *Call, on grpc.ClientConnInterface) (Result, error) {
	var cs grpc.ClientStream
	var err error
	if on != nil {
		cs, err = on.NewStream(actx, s.desc, s.method, c.opts...)
	} else {
		cs, err = s.streamer(actx, s.desc, s.cc, s.method, c.opts...)
	}
	if err != nil {
		close(a.headed)
		return Result{}, ended(ctx, err)
	}
	a.cs = cs
	if !s.join(a) {
		close(a.headed)
		return Result{}, ErrCommitted
	}
	// The header comes before any message; gRPC's Header waits for it, the
	// stream's end without one, or the attempt's cancellation.
	hd, _ := cs.Header()
	s.mu.Lock()
	a.header = hd
	close(a.headed)
	if hd != nil && s.winner == nil && !s.ended && !s.isDone {
		// The server answered with a header: what it says from now on is
		// this stream's, never to be retried (as gRPC commits its own).
		s.commitLocked(a)
	}
	s.mu.Unlock()
	if hd == nil {
		// Ended without a header (a status alone, or cancelled): its status
		// is there to receive, at once, whether the caller asked or not;
		// no message can come, so any will do to receive into.
		return s.received(ctx, a, nil, cs.RecvMsg(new(emptypb.Empty)))
	}
	select {
	case <-s.want:
	case <-s.end:
		return s.stopped(ctx, a)
	case <-actx.Done():
		return s.stopped(ctx, a)
	}
	s.mu.Lock()
	m := s.recvType.fresh()
	s.mu.Unlock()
	err = cs.RecvMsg(m)
	return s.received(ctx, a, m, err)
}

// refusedLocked reports whether no attempt may join any more.
func (s *stream) refusedLocked() bool { return s.winner != nil || s.ended || s.isDone }

// join adds a to the live attempts and sends it what the caller has sent,
// in order, before any later send. It reports false when the stream takes
// no more attempts.
func (s *stream) join(a *attempt) bool {
	s.sendMu.Lock()
	defer s.sendMu.Unlock()
	s.mu.Lock()
	if s.refusedLocked() {
		s.mu.Unlock()
		return false
	}
	s.live = append(s.live, a)
	sent, closed := s.sent, s.closed
	if s.last {
		s.commitLocked(a)
	}
	s.changedLocked()
	if !s.isOpen {
		s.isOpen = true
		close(s.opened)
	}
	s.mu.Unlock()
	for _, m := range sent {
		if err := a.cs.SendMsg(m); err != nil {
			a.broken = true // its receive will tell why
			break
		}
	}
	if closed && !a.broken {
		_ = a.cs.CloseSend()
	}
	return true
}

// stopped is the outcome of an attempt that stopped before receiving: it
// lost, the stream ended, or its context did.
func (s *stream) stopped(ctx context.Context, a *attempt) (Result, error) {
	s.mu.Lock()
	s.removeLocked(a)
	w, isEnded, endErr := s.winner, s.ended, s.endErr
	refused := s.refusedLocked()
	s.mu.Unlock()
	switch {
	case w == a && isEnded:
		return Result{}, committed(endErr)
	case w == a:
		return Result{}, committed(gone(ctx))
	case refused || ctx.Err() == nil:
		return Result{}, ErrCommitted
	}
	return Result{}, ended(ctx, gone(ctx))
}

// received takes the outcome of a's first receive: the first attempt to
// receive its header, a message or the end of its stream wins the stream,
// and its receive is handed to the caller; a failure before any header is
// the attempt's, for the stack's policy to judge.
func (s *stream) received(ctx context.Context, a *attempt, m any, err error) (Result, error) {
	s.mu.Lock()
	if s.winner == nil && (err == nil || err == io.EOF) && !s.ended && !s.isDone {
		s.commitLocked(a)
	}
	if s.winner != a {
		s.removeLocked(a)
		lost := s.refusedLocked()
		var tr metadata.MD
		if !lost {
			tr = a.cs.Trailer()
			s.trailer = tr
		}
		s.mu.Unlock()
		a.cancel()
		if lost {
			return Result{}, ErrCommitted
		}
		return Result{Trailer: tr}, ended(ctx, err)
	}
	s.firstMsg, s.firstErr, s.gotFirst = m, err, true
	close(s.first)
	if err != nil || !s.desc.ServerStreams {
		s.endLocked(err)
	}
	s.mu.Unlock()
	switch {
	case err == io.EOF:
		return Result{}, nil
	case err != nil:
		return Result{}, committed(err)
	case !s.desc.ServerStreams:
		return Result{}, nil
	}
	return s.follow(ctx, a)
}

// follow waits until the winner's stream ends: the caller saw its end, or
// gRPC ended it (then the caller's calls under way are let finish, since
// one of them may be seeing the end).
func (s *stream) follow(ctx context.Context, a *attempt) (Result, error) {
	select {
	case <-s.end:
	case <-a.cs.Context().Done():
		s.mu.Lock()
		for !s.ended && s.calls > 0 {
			idle := make(chan struct{})
			s.idle = idle
			s.mu.Unlock()
			<-idle
			s.mu.Lock()
		}
		isEnded := s.ended
		s.mu.Unlock()
		if !isEnded {
			return Result{}, committed(gone(ctx))
		}
	}
	s.mu.Lock()
	err := s.endErr
	s.mu.Unlock()
	return Result{}, committed(err)
}

// committed marks err as a committed stream's (nil stays nil).
func committed(err error) error {
	if err == nil {
		return nil
	}
	return &committedError{err: err}
}

// gone is the error of a stream that ended under its attempt: its
// context's, as a status, or errConnGone.
func gone(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return status.FromContextError(err).Err()
	}
	return errConnGone
}
