package troupegrpc_test

import (
	"context"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/stages"
	"github.com/troupe-go/troupe/troupegrpc"
	"github.com/troupe-go/troupe/troupetest"
)

// echo is the test server: a hand-written service (no generated code) of
// one method per kind of call, whose behaviour each test sets. Messages
// are wrapperspb.StringValue, so gRPC's default codec carries them.
type echo struct {
	// unary answers Unary; n counts its calls from 1.
	unary func(ctx context.Context, n int32, in string) (string, error)
	// stream serves Server, Client and Bidi; n counts its calls from 1.
	stream func(n int32, ss grpc.ServerStream) error

	unaryCalls, streamCalls atomic.Int32
}

type echoServer interface{ isEcho() }

// holdingFirst returns an echo whose first unary call closes entered and
// waits for release to be closed; every call answers its input.
func holdingFirst() (e *echo, entered, release chan struct{}) {
	entered, release = make(chan struct{}), make(chan struct{})
	e = &echo{unary: func(_ context.Context, n int32, in string) (string, error) {
		if n == 1 {
			close(entered)
			<-release
		}
		return in, nil
	}}
	return e, entered, release
}

// recordCodes returns a unary server interceptor that sends the status
// code the server answered each call with, as it answers it, to a channel
// with room for n.
func recordCodes(n int) (grpc.UnaryServerInterceptor, <-chan codes.Code) {
	answered := make(chan codes.Code, n)
	return func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		out, err := h(ctx, req)
		answered <- status.Code(err)
		return out, err
	}, answered
}

func (*echo) isEcho() {}

const (
	mUnary  = "/test.Echo/Unary"
	mServer = "/test.Echo/Server"
	mClient = "/test.Echo/Client"
	mBidi   = "/test.Echo/Bidi"
)

var (
	serverDesc = &grpc.StreamDesc{StreamName: "Server", ServerStreams: true}
	clientDesc = &grpc.StreamDesc{StreamName: "Client", ClientStreams: true}
	bidiDesc   = &grpc.StreamDesc{StreamName: "Bidi", ServerStreams: true, ClientStreams: true}
)

var echoDesc = grpc.ServiceDesc{
	ServiceName: "test.Echo",
	HandlerType: (*echoServer)(nil),
	Methods:     []grpc.MethodDesc{{MethodName: "Unary", Handler: unaryHandler}},
	Streams: []grpc.StreamDesc{
		{StreamName: "Server", Handler: streamHandler, ServerStreams: true},
		{StreamName: "Client", Handler: streamHandler, ClientStreams: true},
		{StreamName: "Bidi", Handler: streamHandler, ServerStreams: true, ClientStreams: true},
	},
}

func unaryHandler(srv any, ctx context.Context, dec func(any) error, icpt grpc.UnaryServerInterceptor) (any, error) {
	in := new(wrapperspb.StringValue)
	if err := dec(in); err != nil {
		return nil, err
	}
	e := srv.(*echo)
	h := func(ctx context.Context, req any) (any, error) {
		out, err := e.unary(ctx, e.unaryCalls.Add(1), req.(*wrapperspb.StringValue).GetValue())
		if err != nil {
			return nil, err
		}
		return wrapperspb.String(out), nil
	}
	if icpt == nil {
		return h(ctx, in)
	}
	return icpt(ctx, in, &grpc.UnaryServerInfo{Server: srv, FullMethod: mUnary}, h)
}

func streamHandler(srv any, ss grpc.ServerStream) error {
	e := srv.(*echo)
	return e.stream(e.streamCalls.Add(1), ss)
}

// serve starts e on a loopback TCP port and returns its address; the
// server stops with the test, after its handlers have returned.
func serve(t testing.TB, e *echo, opts ...grpc.ServerOption) string {
	t.Helper()
	srv := grpc.NewServer(append(opts, grpc.WaitForHandlers(true))...)
	srv.RegisterService(&echoDesc, e)
	return start(t, srv)
}

// start serves srv on a loopback TCP port and returns its address; the
// server stops with the test, after its handlers have returned.
func start(t testing.TB, srv *grpc.Server) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var wg sync.WaitGroup
	wg.Go(func() { _ = srv.Serve(lis) })
	t.Cleanup(func() {
		srv.Stop()
		wg.Wait()
	})
	return lis.Addr().String()
}

// dial connects to addr with opts; the connection closes with the test.
func dial(t testing.TB, addr string, opts ...grpc.DialOption) *grpc.ClientConn {
	t.Helper()
	opts = append(opts, grpc.WithTransportCredentials(insecure.NewCredentials()))
	cc, err := grpc.NewClient("passthrough:///"+addr, opts...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = cc.Close() })
	return cc
}

// through connects to addr with both client interceptors over svc.
func through(t testing.TB, addr string, svc troupe.Service[*troupegrpc.Call, troupegrpc.Result]) *grpc.ClientConn {
	return dial(t, addr,
		grpc.WithUnaryInterceptor(troupegrpc.UnaryClientInterceptor(svc)),
		grpc.WithStreamInterceptor(troupegrpc.StreamClientInterceptor(svc)))
}

// build builds b over the Invoke leaf in a test system.
func build(t testing.TB, b stages.Builder[*troupegrpc.Call, troupegrpc.Result]) *troupe.Stack[*troupegrpc.Call, troupegrpc.Result] {
	t.Helper()
	st, err := b.Build(troupetest.NewSystem(t), troupegrpc.Invoke())
	require.NoError(t, err)
	return st
}

// unary calls Unary with in.
func unary(ctx context.Context, cc *grpc.ClientConn, in string, opts ...grpc.CallOption) (string, error) {
	out := new(wrapperspb.StringValue)
	err := cc.Invoke(ctx, mUnary, wrapperspb.String(in), out, opts...)
	return out.GetValue(), err
}

// send and recv move one string on any stream.
func send(s grpc.Stream, v string) error { return s.SendMsg(wrapperspb.String(v)) }

// openServerStream opens a server-streaming call on cc, sends it in and
// closes its sending side.
func openServerStream(t *testing.T, cc *grpc.ClientConn, in string) grpc.ClientStream {
	t.Helper()
	s, err := cc.NewStream(t.Context(), serverDesc, mServer)
	require.NoError(t, err)
	require.NoError(t, send(s, in))
	require.NoError(t, s.CloseSend())
	return s
}

func recv(s grpc.Stream) (string, error) {
	m := new(wrapperspb.StringValue)
	err := s.RecvMsg(m)
	return m.GetValue(), err
}

// recvAll receives until the stream ends, and returns what came and the
// last error (io.EOF when it ended well).
func recvAll(s grpc.Stream) ([]string, error) {
	var got []string
	for {
		v, err := recv(s)
		if err != nil {
			return got, err
		}
		got = append(got, v)
	}
}

// events counts a stack's events by type and stage, so that a test can
// wait for what a stage did instead of sleeping. Safe for concurrent use.
type events struct {
	mu      sync.Mutex
	n       map[evKey]int // guarded by mu
	changed chan struct{} // guarded by mu: closed and replaced on each event
}

type evKey struct {
	typ   troupe.EventType
	stage string
}

func newEvents() *events {
	return &events{n: map[evKey]int{}, changed: make(chan struct{})}
}

func (e *events) Observe(ev troupe.Event) {
	e.mu.Lock()
	e.n[evKey{ev.Type, ev.Stage}]++
	close(e.changed)
	e.changed = make(chan struct{})
	e.mu.Unlock()
}

// wait waits until stage has reported n events of type typ.
func (e *events) wait(t testing.TB, typ troupe.EventType, stage string, n int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	for {
		e.mu.Lock()
		got, ch := e.n[evKey{typ, stage}], e.changed
		e.mu.Unlock()
		if got >= n {
			return
		}
		select {
		case <-ch:
		case <-ctx.Done():
			e.mu.Lock()
			defer e.mu.Unlock()
			t.Fatalf("waited for %d events %v of %s, got %d; all: %v", n, typ, stage, got, e.n)
		}
	}
}
