package troupegrpc

import (
	"context"
	"io"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// attempt is one stream the stack opened for a stream call.
type attempt struct {
	cs     grpc.ClientStream  // set when made, then read-only
	cancel context.CancelFunc // cancels cs; safe for concurrent use
	broken bool               // guarded by stream.sendMu: a send failed, send no more
}

// errConnGone is a committed stream's outcome when gRPC ended it without
// its caller seeing the end (the connection was closed).
var errConnGone = status.Error(codes.Canceled, "troupegrpc: the stream ended before its caller read its status")

// attempt is the Invoke leaf's work for a stream call: it opens a stream,
// joins it to the call (sending it what the caller has sent), receives the
// first response message when the caller asks for one, and, if it wins,
// lasts until the stream ends.
func (s *stream) attempt(ctx context.Context, c *Call) (Result, error) {
	s.mu.Lock()
	refused := s.refusedLocked()
	s.mu.Unlock()
	if refused {
		return Result{}, ErrCommitted
	}
	actx, cancel := context.WithCancel(ctx)
	defer cancel()
	cs, err := s.streamer(actx, s.desc, s.cc, s.method, c.opts...)
	if err != nil {
		return Result{}, ended(ctx, err)
	}
	a := &attempt{cs: cs, cancel: cancel}
	if !s.join(a) {
		return Result{}, ErrCommitted
	}
	select {
	case <-s.want:
	case <-s.end:
		return s.stopped(ctx, a)
	case <-actx.Done():
		return s.stopped(ctx, a)
	}
	s.mu.Lock()
	m := s.newMsg()
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
	close(s.joined)
	s.joined = make(chan struct{})
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
// receive a message (or the end of its stream) wins the stream, and its
// receive is handed to the caller.
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
