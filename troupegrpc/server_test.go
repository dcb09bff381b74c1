package troupegrpc_test

import (
	"context"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/stages"
	"github.com/troupe-go/troupe/stages/breaker"
	"github.com/troupe-go/troupe/stages/loadshed"
	"github.com/troupe-go/troupe/troupegrpc"
	"github.com/troupe-go/troupe/troupetest"
)

// admission builds a server stack over the Handle leaf.
func admission(t testing.TB, b stages.Builder[*troupegrpc.ServerCall, any]) *troupe.Stack[*troupegrpc.ServerCall, any] {
	t.Helper()
	st, err := b.Build(troupetest.NewSystem(t), troupegrpc.Handle())
	require.NoError(t, err)
	return st
}

// guarded serves e behind both server interceptors over svc.
func guarded(t testing.TB, e *echo, svc troupe.Service[*troupegrpc.ServerCall, any], opts ...troupegrpc.ServerOption) string {
	return serve(t, e,
		grpc.UnaryInterceptor(troupegrpc.UnaryServerInterceptor(svc, opts...)),
		grpc.StreamInterceptor(troupegrpc.StreamServerInterceptor(svc, opts...)))
}

// spec: G2
func TestG2_UnaryAdmissionShedsWithResourceExhaustedAndAPushback(t *testing.T) {
	e, entered, release := holdingFirst()
	obs := newEvents()
	st := admission(t, stages.Stack[*troupegrpc.ServerCall, any]().Observe(obs, "server").LoadShed().Limit(1))
	cc := dial(t, guarded(t, e, st, troupegrpc.WithPushback(250*time.Millisecond)))
	var calls sync.WaitGroup
	for _, in := range []string{"x", "y"} {
		calls.Go(func() {
			out, err := unary(t.Context(), cc, in)
			assert.NoError(t, err)
			assert.Equal(t, in, out)
		})
		if in == "x" {
			<-entered
		}
	}
	obs.wait(t, troupe.EventAccepted, "loadshed", 2) // x runs, y waits its turn
	var tr metadata.MD
	_, err := unary(t.Context(), cc, "z", grpc.Trailer(&tr))
	require.Equal(t, codes.ResourceExhausted, status.Code(err))
	require.Equal(t, []string{"250"}, tr.Get(troupegrpc.PushbackKey))
	close(release)
	calls.Wait()
	require.EqualValues(t, 2, e.unaryCalls.Load(), "z's handler never ran")
}

// spec: G2
func TestG2_StreamAdmissionCountsOpenStreams(t *testing.T) {
	e := &echo{stream: func(n int32, ss grpc.ServerStream) error {
		_, err := collect(ss) // open until the client closes its side
		if err != nil {
			return err
		}
		return send(ss, "bye")
	}}
	obs := newEvents()
	st := admission(t, stages.Stack[*troupegrpc.ServerCall, any]().Observe(obs, "server").LoadShed().Limit(1))
	cc := dial(t, guarded(t, e, st))
	open := func() grpc.ClientStream {
		s, err := cc.NewStream(t.Context(), bidiDesc, mBidi)
		require.NoError(t, err)
		if err := send(s, "hi"); err != io.EOF { // EOF: refused already; RecvMsg says why
			require.NoError(t, err)
		}
		return s
	}
	s1 := open()
	obs.wait(t, troupe.EventStarted, "limit", 1) // s1's handler runs
	s2 := open()
	obs.wait(t, troupe.EventAccepted, "loadshed", 2) // s2 waits its turn
	s3 := open()
	_, err := recv(s3)
	require.Equal(t, codes.ResourceExhausted, status.Code(err))
	require.Equal(t, []string{"100"}, s3.Trailer().Get(troupegrpc.PushbackKey), "the default pushback")
	for _, s := range []grpc.ClientStream{s1, s2} {
		require.NoError(t, s.CloseSend())
		v, err := recv(s)
		require.NoError(t, err)
		require.Equal(t, "bye", v)
	}
	require.EqualValues(t, 2, e.streamCalls.Load())
}

// spec: G2
func TestG2_AClientRetriesAServersRefusalAfterItsPushback(t *testing.T) {
	e, entered, release := holdingFirst()
	// The server holds one call and sheds the rest; the test frees it as
	// soon as the server has refused one.
	refused := make(chan struct{}, 1)
	record := func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		out, err := h(ctx, req)
		if status.Code(err) == codes.ResourceExhausted {
			refused <- struct{}{}
		}
		return out, err
	}
	obs := newEvents()
	st := admission(t, stages.Stack[*troupegrpc.ServerCall, any]().
		Observe(obs, "server").
		LoadShed(loadshed.Capacity(1)).
		Limit(1))
	addr := serve(t, e, grpc.ChainUnaryInterceptor(record,
		troupegrpc.UnaryServerInterceptor(st, troupegrpc.WithPushback(150*time.Millisecond))))
	cc := through(t, addr, build(t, stack()))
	first := make(chan error, 1)
	go func() {
		_, err := unary(t.Context(), cc, "x")
		first <- err
	}()
	<-entered
	second := make(chan error, 1)
	go func() { // waits in the server's load shedder
		_, err := unary(t.Context(), cc, "y")
		second <- err
	}()
	obs.wait(t, troupe.EventAccepted, "loadshed", 2)
	start := time.Now()
	go func() {
		<-refused
		close(release)
	}()
	out, err := unary(t.Context(), cc, "z")
	require.NoError(t, err)
	require.Equal(t, "z", out)
	require.GreaterOrEqual(t, time.Since(start), 150*time.Millisecond, "z came back after the pushback")
	require.NoError(t, <-first)
	require.NoError(t, <-second)
	require.EqualValues(t, 3, e.unaryCalls.Load())
}

// spec: G2
func TestG2_AnOpenBreakerAnswersUnavailableWithItsDelay(t *testing.T) {
	e := &echo{unary: func(context.Context, int32, string) (string, error) {
		return "", status.Error(codes.Internal, "broken")
	}}
	st := admission(t, stages.Stack[*troupegrpc.ServerCall, any]().
		Breaker(breaker.CountWindow(2), breaker.MinCalls(2), breaker.OpenDelay(3*time.Second)))
	cc := dial(t, guarded(t, e, st))
	for range 2 {
		_, err := unary(t.Context(), cc, "x")
		require.Equal(t, codes.Internal, status.Code(err), "the handler's own error, as it is")
	}
	var tr metadata.MD
	_, err := unary(t.Context(), cc, "x", grpc.Trailer(&tr))
	require.Equal(t, codes.Unavailable, status.Code(err))
	wait, ok := troupegrpc.ServerPushback(tr)
	require.True(t, ok)
	require.Greater(t, wait, 2*time.Second)
	require.LessOrEqual(t, wait, 3*time.Second)
	require.EqualValues(t, 2, e.unaryCalls.Load())
}

// spec: G2
func TestG2_TheClientsDeadlineBoundsTheWaitForAdmission(t *testing.T) {
	entered, release := make(chan struct{}), make(chan struct{})
	left := make(chan time.Duration, 1)
	e := &echo{unary: func(ctx context.Context, n int32, in string) (string, error) {
		if n == 1 {
			dl, _ := ctx.Deadline()
			left <- time.Until(dl)
			close(entered)
			<-release
		}
		return in, nil
	}}
	// What the server answered each call, as it answered it.
	record, answered := recordCodes(2)
	st := admission(t, stages.Stack[*troupegrpc.ServerCall, any]().Limit(1))
	cc := dial(t, serve(t, e, grpc.ChainUnaryInterceptor(record, troupegrpc.UnaryServerInterceptor(st))))
	first := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		_, err := unary(ctx, cc, "x")
		first <- err
	}()
	<-entered
	require.LessOrEqual(t, <-left, 10*time.Second, "the handler sees the client's deadline")
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	_, err := unary(ctx, cc, "y")
	require.Equal(t, codes.DeadlineExceeded, status.Code(err))
	require.Contains(t, []codes.Code{codes.DeadlineExceeded, codes.Canceled}, <-answered,
		"the server gave up on y too, without running its handler")
	close(release)
	require.NoError(t, <-first)
	require.Equal(t, codes.OK, <-answered)
	require.EqualValues(t, 1, e.unaryCalls.Load())
}

// spec: G2
func TestG2_AClosedStackAnswersUnavailable(t *testing.T) {
	e := &echo{unary: func(_ context.Context, _ int32, in string) (string, error) { return in, nil }}
	st := admission(t, stages.Stack[*troupegrpc.ServerCall, any]().Limit(4))
	cc := dial(t, guarded(t, e, st, troupegrpc.WithPushback(-1)))
	require.NoError(t, st.Close(t.Context()))
	var tr metadata.MD
	_, err := unary(t.Context(), cc, "x", grpc.Trailer(&tr))
	require.Equal(t, codes.Unavailable, status.Code(err))
	require.Empty(t, tr.Get(troupegrpc.PushbackKey), "WithPushback(-1) sends none")
	require.Zero(t, e.unaryCalls.Load())
}
