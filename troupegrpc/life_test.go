package troupegrpc_test

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/stages"
	"github.com/troupe-go/troupe/stages/hedge"
	"github.com/troupe-go/troupe/troupegrpc"
	"github.com/troupe-go/troupe/troupetest"
)

// spec: G1
func TestG1_AStreamHoldsItsPermitForItsWholeLife(t *testing.T) {
	release := make(chan struct{})
	e := &echo{stream: func(n int32, ss grpc.ServerStream) error {
		if err := send(ss, "open"); err != nil {
			return err
		}
		if n == 1 {
			<-release
		} else {
			<-ss.Context().Done()
		}
		return nil
	}}
	st := build(t, stages.Stack[*troupegrpc.Call, troupegrpc.Result]().Limit(2))
	cc := through(t, serve(t, e), st)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	open := func(ctx context.Context) (grpc.ClientStream, error) {
		s, err := cc.NewStream(ctx, serverDesc, mServer)
		if err != nil {
			return nil, err
		}
		if err := send(s, "x"); err != nil {
			return nil, err
		}
		if err := s.CloseSend(); err != nil {
			return nil, err
		}
		v, err := recv(s)
		if err == nil && v != "open" {
			err = io.ErrUnexpectedEOF
		}
		return s, err
	}
	s1, err := open(ctx)
	require.NoError(t, err)
	_, err = open(ctx)
	require.NoError(t, err)
	lim, _ := st.Stats("limit")
	require.Equal(t, 2, lim.Used, "two open streams, two permits")

	// A third waits for a permit: until its deadline, here.
	short, stop := context.WithTimeout(ctx, 50*time.Millisecond)
	defer stop()
	_, err = open(short)
	require.Equal(t, codes.DeadlineExceeded, status.Code(err))
	require.EqualValues(t, 2, e.streamCalls.Load(), "the third never reached the server")

	// So do unary calls through the same stack.
	_, err = unary(short, cc, "u")
	require.Equal(t, codes.DeadlineExceeded, status.Code(err))

	close(release)
	_, err = recvAll(s1)
	require.Equal(t, io.EOF, err)
	lim, _ = st.Stats("limit")
	require.Equal(t, 1, lim.Used, "the ended stream gave its permit back before its caller saw the end")
	_, err = open(ctx)
	require.NoError(t, err)
	require.EqualValues(t, 3, e.streamCalls.Load())
}

// spec: G1
func TestG1_AStreamIsHedgedBeforeItsFirstMessage(t *testing.T) {
	cancelled := make(chan struct{})
	e := &echo{stream: func(n int32, ss grpc.ServerStream) error {
		if _, err := recv(ss); err != nil {
			return err
		}
		if n == 1 {
			<-ss.Context().Done() // never answers: the hedge does
			close(cancelled)
			return nil
		}
		for _, v := range []string{"b1", "b2"} {
			if err := send(ss, v); err != nil {
				return err
			}
		}
		return nil
	}}
	cc := through(t, serve(t, e), build(t, stages.Stack[*troupegrpc.Call, troupegrpc.Result]().
		Hedge(hedge.Delay(20*time.Millisecond), hedge.NoBudget())))
	s := openServerStream(t, cc, "x")
	got, err := recvAll(s)
	require.Equal(t, io.EOF, err)
	require.Equal(t, []string{"b1", "b2"}, got)
	<-cancelled
	require.EqualValues(t, 2, e.streamCalls.Load())
}

// spec: G1
func TestG1_AStreamIsNotHedgedAfterItsFirstMessage(t *testing.T) {
	release := make(chan struct{})
	e := &echo{stream: func(n int32, ss grpc.ServerStream) error {
		if err := send(ss, "a"); err != nil {
			return err
		}
		<-release
		return send(ss, "b")
	}}
	obs := newEvents()
	cc := through(t, serve(t, e), build(t, stages.Stack[*troupegrpc.Call, troupegrpc.Result]().
		Observe(obs, "test").
		Hedge(hedge.Delay(300*time.Millisecond), hedge.NoBudget())))
	s, err := cc.NewStream(t.Context(), bidiDesc, mBidi)
	require.NoError(t, err)
	v, err := recv(s)
	require.NoError(t, err)
	require.Equal(t, "a", v)
	obs.wait(t, troupe.EventHedged, "hedge", 1) // the hedge went, and opened no stream
	close(release)
	require.NoError(t, s.CloseSend())
	got, err := recvAll(s)
	require.Equal(t, io.EOF, err)
	require.Equal(t, []string{"b"}, got)
	require.EqualValues(t, 1, e.streamCalls.Load())
}

// spec: G1
func TestG1_AStreamsDeadlineIsTheStacks(t *testing.T) {
	left := make(chan time.Duration, 1)
	e := &echo{stream: func(n int32, ss grpc.ServerStream) error {
		dl, ok := ss.Context().Deadline()
		require.True(t, ok)
		left <- time.Until(dl)
		if err := send(ss, "a"); err != nil {
			return err
		}
		<-ss.Context().Done()
		return status.FromContextError(ss.Context().Err()).Err()
	}}
	cc := through(t, serve(t, e), build(t, stages.Stack[*troupegrpc.Call, troupegrpc.Result]().
		Timeout(200*time.Millisecond).
		Layer(troupegrpc.Retry(3, nil))))
	s, err := cc.NewStream(t.Context(), bidiDesc, mBidi)
	require.NoError(t, err)
	got, err := recvAll(s)
	require.Equal(t, []string{"a"}, got)
	require.Equal(t, codes.DeadlineExceeded, status.Code(err))
	// The stage's timer or the deadline it gave the call, whichever
	// ends it first: DEADLINE_EXCEEDED either way.
	require.LessOrEqual(t, <-left, 200*time.Millisecond)
	require.EqualValues(t, 1, e.streamCalls.Load())
}

// spec: G1
func TestG1_AStreamCancelledByItsCallerEnds(t *testing.T) {
	e := &echo{stream: func(n int32, ss grpc.ServerStream) error {
		if err := send(ss, "a"); err != nil {
			return err
		}
		<-ss.Context().Done()
		return status.FromContextError(ss.Context().Err()).Err()
	}}
	st := build(t, stack())
	cc := through(t, serve(t, e), st)
	ctx, cancel := context.WithCancel(t.Context())
	s, err := cc.NewStream(ctx, bidiDesc, mBidi)
	require.NoError(t, err)
	v, err := recv(s)
	require.NoError(t, err)
	require.Equal(t, "a", v)
	cancel()
	_, err = recv(s)
	require.Equal(t, codes.Canceled, status.Code(err))
	lim, _ := st.Stats("limit")
	require.Zero(t, lim.Used)
	require.EqualValues(t, 1, e.streamCalls.Load())
}

// spec: G1
func TestG1_AnAttemptAfterTheFirstMessageOpensNoStream(t *testing.T) {
	release := make(chan struct{})
	e := &echo{stream: func(n int32, ss grpc.ServerStream) error {
		if err := send(ss, "a"); err != nil {
			return err
		}
		<-release
		return nil
	}}
	// A leaf of the test's own: a second attempt of the call goes when
	// the test says.
	again, second := make(chan struct{}), make(chan error, 1)
	leaf := actors.Func(func(ctx context.Context, c *troupegrpc.Call) (troupegrpc.Result, error) {
		go func() {
			<-again
			_, err := troupe.Do(ctx, troupegrpc.Invoke(), c)
			second <- err
		}()
		return troupe.Do(ctx, troupegrpc.Invoke(), c)
	})
	st, err := stages.Stack[*troupegrpc.Call, troupegrpc.Result]().
		Build(troupetest.NewSystem(t), leaf)
	require.NoError(t, err)
	cc := through(t, serve(t, e), st)
	s := openServerStream(t, cc, "x")
	v, err := recv(s)
	require.NoError(t, err)
	require.Equal(t, "a", v)
	close(again)
	require.ErrorIs(t, <-second, troupegrpc.ErrCommitted)
	close(release)
	_, err = recvAll(s)
	require.Equal(t, io.EOF, err)
	require.EqualValues(t, 1, e.streamCalls.Load())
}
