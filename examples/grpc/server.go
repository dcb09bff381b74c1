package main

import (
	"context"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"net"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/troupe-go/troupe/troupegrpc"
)

// The quote service, written by hand instead of generated from a .proto:
// Quote answers one quote, Prices streams a symbol's prices. Messages are
// wrapperspb.StringValue, which gRPC's default codec carries.
const (
	quoteMethod  = "/demo.Quotes/Quote"
	pricesMethod = "/demo.Quotes/Prices"
)

var pricesDesc = &grpc.StreamDesc{StreamName: "Prices", ServerStreams: true}

type quotesServer interface{ quotes() }

func (*server) quotes() {}

var quotesDesc = grpc.ServiceDesc{
	ServiceName: "demo.Quotes",
	HandlerType: (*quotesServer)(nil),
	Methods: []grpc.MethodDesc{{MethodName: "Quote", Handler: func(srv any, ctx context.Context,
		dec func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
		in := new(wrapperspb.StringValue)
		if err := dec(in); err != nil {
			return nil, err
		}
		return srv.(*server).quote(ctx, in.GetValue())
	}}},
	Streams: []grpc.StreamDesc{{StreamName: "Prices", ServerStreams: true, Handler: func(srv any, ss grpc.ServerStream) error {
		in := new(wrapperspb.StringValue)
		if err := ss.RecvMsg(in); err != nil {
			return err
		}
		return srv.(*server).prices(ss, in.GetValue())
	}}},
}

// server is the flaky quote server. It records every attempt: when it came,
// how many of the same call came before, how many ran at once, whether it
// came before the pushback its previous attempt was given had ended, and
// whether a stream came again after one of its attempts had sent a price.
type server struct {
	cfg  config
	addr string
	g    *grpc.Server
	done chan struct{} // closed when Serve returns

	mu       sync.Mutex
	arrivals []time.Time          // guarded by mu
	attempts map[string]int       // guarded by mu: by call id
	notAt    map[string]time.Time // guarded by mu: a pushed-back call's earliest next attempt
	early    int                  // guarded by mu: attempts that came before their pushback ended
	pushed   int                  // guarded by mu: pushbacks sent
	sent     map[string]bool      // guarded by mu: streams that have sent a price
	again    int                  // guarded by mu: stream attempts after a price was sent
	inFlight int                  // guarded by mu
	peak     int                  // guarded by mu
}

func startServer(cfg config) (*server, error) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &server{
		cfg: cfg, addr: lis.Addr().String(), g: grpc.NewServer(), done: make(chan struct{}),
		attempts: map[string]int{}, notAt: map[string]time.Time{}, sent: map[string]bool{},
	}
	s.g.RegisterService(&quotesDesc, s)
	go func() {
		defer close(s.done)
		_ = s.g.Serve(lis)
	}()
	return s, nil
}

func (s *server) stop() {
	s.g.Stop()
	<-s.done
}

// fault is what the server does with an attempt.
type fault int

const (
	answer fault = iota
	unavailable
	busy
	cut
)

// arrive records an attempt of call id and draws its fault.
func (s *server) arrive(id string, stream bool) fault {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	s.arrivals = append(s.arrivals, now)
	s.attempts[id]++
	if at, ok := s.notAt[id]; ok && now.Before(at) {
		s.early++
	}
	delete(s.notAt, id)
	if stream && s.sent[id] {
		s.again++
	}
	s.inFlight++
	s.peak = max(s.peak, s.inFlight)
	switch f := s.draw(id, s.attempts[id]); {
	case f < s.cfg.fail:
		return unavailable
	case f < s.cfg.fail+s.cfg.busy:
		s.notAt[id] = now.Add(s.cfg.pushback)
		s.pushed++
		return busy
	case stream && s.cuts(id):
		return cut
	}
	return answer
}

// draw is the fault's draw for attempt n of call id: a function of the
// seed, the call and the attempt only, so that a seed decides every call's
// fate whatever order the attempts arrive in.
func (s *server) draw(id string, n int) float64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(id))
	return rand.New(rand.NewPCG(s.cfg.seed, h.Sum64()+uint64(n))).Float64()
}

// cuts reports whether stream id is one the server cuts: the first of
// them, the cut share of all the streams.
func (s *server) cuts(id string) bool {
	var i int
	_, err := fmt.Sscanf(id, "s-%d", &i)
	return err == nil && float64(i) < s.cfg.cut*float64(s.cfg.streams)
}

func (s *server) leave() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.inFlight--
}

// refuse answers a refused attempt.
func (s *server) refuse(f fault, setTrailer func(metadata.MD)) error {
	if f == busy {
		setTrailer(metadata.Pairs(troupegrpc.PushbackKey, fmt.Sprint(s.cfg.pushback.Milliseconds())))
		return status.Error(codes.ResourceExhausted, "too busy, come back later")
	}
	return status.Error(codes.Unavailable, "restarting")
}

func (s *server) quote(ctx context.Context, id string) (any, error) {
	f := s.arrive(id, false)
	defer s.leave()
	if f != answer {
		return nil, s.refuse(f, func(md metadata.MD) { _ = grpc.SetTrailer(ctx, md) })
	}
	return wrapperspb.String(fmt.Sprintf("%s: %d.%02d", id, 40+len(id), len(id)*7%100)), nil
}

// tickEvery spaces a stream's prices.
const tickEvery = 10 * time.Millisecond

func (s *server) prices(ss grpc.ServerStream, id string) error {
	f := s.arrive(id, true)
	defer s.leave()
	if f == unavailable || f == busy {
		return s.refuse(f, ss.SetTrailer)
	}
	for i := range s.cfg.ticks {
		if f == cut && i == 2 {
			return status.Error(codes.Unavailable, "feed lost")
		}
		if err := ss.SendMsg(wrapperspb.String(fmt.Sprintf("%s tick %d", id, i))); err != nil {
			return err
		}
		s.mu.Lock()
		s.sent[id] = true
		s.mu.Unlock()
		select {
		case <-time.After(tickEvery):
		case <-ss.Context().Done():
			return status.FromContextError(ss.Context().Err()).Err()
		}
	}
	return nil
}

// serverResults is what the server saw.
type serverResults struct {
	arrivals  int
	retries   int           // attempts after a call's first
	mostTries int           // most attempts of one call
	maxWindow int           // most arrivals in any window [t, t+per)
	windowAt  time.Duration // where that window starts, from the first arrival
	peak      int           // most attempts handled at once
	pushed    int           // pushbacks asked for
	early     int           // attempts that came before their pushback ended
	again     int           // stream attempts after the stream had sent a price
}

func (s *server) results(per time.Duration) serverResults {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := serverResults{arrivals: len(s.arrivals), peak: s.peak, pushed: s.pushed, early: s.early, again: s.again}
	r.maxWindow, r.windowAt = maxInWindow(s.arrivals, per)
	for _, n := range s.attempts {
		r.mostTries = max(r.mostTries, n)
		r.retries += n - 1
	}
	return r
}

// maxInWindow is the most of the sorted times ts in any window of length
// per, and where the first such window starts, from ts[0].
func maxInWindow(ts []time.Time, per time.Duration) (most int, at time.Duration) {
	j := 0
	for i := range ts {
		for j < len(ts) && ts[j].Sub(ts[i]) < per {
			j++
		}
		if j-i > most {
			most, at = j-i, ts[i].Sub(ts[0])
		}
	}
	return most, at
}
