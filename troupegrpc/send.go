package troupegrpc

import (
	"context"
	"io"
	"slices"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// SendMsg implements grpc.ClientStream. Before the stream is committed,
// the message is kept (a copy of a protocol buffer; any other message as
// it is, and the stream is committed) to be sent to later attempts too, and
// an attempt whose stream has failed is skipped: its failure comes out of
// its receive, and SendMsg returns nil. Once committed, SendMsg is the
// winner's.
func (s *stream) SendMsg(m any) error {
	s.sendMu.Lock()
	defer s.sendMu.Unlock()
	s.mu.Lock()
	if s.sentLast {
		s.mu.Unlock()
		return status.Error(codes.Internal, "SendMsg called after CloseSend")
	}
	if !s.desc.ClientStreams {
		s.sentLast = true
	}
	if s.winner == nil && !s.isDone && !s.ended {
		c, n, ok := replayable(m)
		s.sent, s.size = append(s.sent, c), s.size+n
		if !ok || s.size > s.limit {
			s.last = true
			if len(s.live) > 0 {
				s.commitLocked(s.live[0])
			}
		}
	}
	if w := s.winner; w != nil {
		s.calls++
		s.mu.Unlock()
		err := w.cs.SendMsg(m)
		s.mu.Lock()
		if err != nil && err != io.EOF {
			s.failLocked(err)
		}
		s.leaveLocked()
		s.mu.Unlock()
		return err
	}
	if s.isDone || s.ended {
		s.mu.Unlock()
		return io.EOF
	}
	live := slices.Clone(s.live)
	s.mu.Unlock()
	for _, a := range live {
		if a.broken {
			continue
		}
		if err := a.cs.SendMsg(m); err != nil {
			a.broken = true
			if err != io.EOF {
				// The client's own error (a message too large, one that
				// does not encode): every attempt would meet it.
				s.mu.Lock()
				s.failLocked(err)
				s.mu.Unlock()
				return err
			}
		}
	}
	return nil
}

// CloseSend implements grpc.ClientStream. Attempts that join later are
// closed after their replay.
func (s *stream) CloseSend() error {
	s.sendMu.Lock()
	defer s.sendMu.Unlock()
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed, s.sentLast = true, true
	live := slices.Clone(s.live)
	if s.winner != nil {
		live = append(live[:0], s.winner)
	}
	s.mu.Unlock()
	for _, a := range live {
		if !a.broken {
			_ = a.cs.CloseSend()
		}
	}
	return nil
}

// Header implements grpc.ClientStream. It waits until the stream is
// committed to an attempt, and returns that attempt's header once it has
// come: the stream commits when an attempt receives its header (or its
// first message, or the end of its stream), so an attempt that fails
// before any header is retried or hedged as if Header had not been called,
// as gRPC's own retries do. When the stream ends without a header, Header
// returns nil and no error, as gRPC's does: RecvMsg tells the status.
func (s *stream) Header() (metadata.MD, error) {
	s.mu.Lock()
	for {
		if w := s.winner; w != nil {
			s.mu.Unlock()
			<-w.headed // set once its stream has a header or ended without one
			return w.header, nil
		}
		if s.isDone || s.ended {
			s.mu.Unlock()
			return nil, nil // as gRPC: the status comes from RecvMsg
		}
		changed := s.changed
		s.mu.Unlock()
		select {
		case <-changed:
		case <-s.done:
		}
		s.mu.Lock()
	}
}

// Trailer implements grpc.ClientStream: the winner's trailer, or the last
// failed attempt's when no attempt won.
func (s *stream) Trailer() metadata.MD {
	s.mu.Lock()
	w, tr := s.winner, s.trailer
	s.mu.Unlock()
	if w != nil {
		return w.cs.Trailer()
	}
	return tr
}

// Context implements grpc.ClientStream: the winner's stream context once
// the caller has received from it, the caller's context before.
func (s *stream) Context() context.Context {
	s.mu.Lock()
	w, handed := s.winner, s.handed
	s.mu.Unlock()
	if w != nil && handed {
		return w.cs.Context()
	}
	return s.ctx
}

// commitLocked commits the stream to a: the other attempts are cancelled,
// nothing is kept for replay, and no attempt joins any more.
func (s *stream) commitLocked(a *attempt) {
	s.winner, s.last = a, true
	s.changedLocked()
	s.sent, s.size = nil, 0
	for _, o := range s.live {
		if o != a {
			o.cancel()
		}
	}
	s.live = append(s.live[:0], a)
}

// failLocked ends the stream with the client's own error, which the
// caller has seen: its attempts are cancelled, wherever they wait.
func (s *stream) failLocked(err error) {
	s.endLocked(err)
	for _, a := range s.live {
		a.cancel()
	}
}

// removeLocked takes a out of the live attempts.
func (s *stream) removeLocked(a *attempt) {
	if i := slices.Index(s.live, a); i >= 0 {
		s.live = slices.Delete(s.live, i, i+1)
	}
}
