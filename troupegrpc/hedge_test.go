package troupegrpc_test

import (
	"context"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/stages"
	"github.com/troupe-go/troupe/stages/hedge"
	"github.com/troupe-go/troupe/troupegrpc"
	"github.com/troupe-go/troupe/troupetest"
)

// spec: G1
func TestG1_AHedgedBidiStreamGetsWhatWasSentAndTheWinnerTheRest(t *testing.T) {
	firstSaw := make(chan []string, 1)
	e := &echo{stream: func(n int32, ss grpc.ServerStream) error {
		if n == 1 { // reads, never answers
			var got []string
			for {
				v, err := recv(ss)
				if err != nil {
					firstSaw <- got
					return status.FromContextError(ss.Context().Err()).Err()
				}
				got = append(got, v)
			}
		}
		for {
			v, err := recv(ss)
			if err == io.EOF {
				return nil
			}
			if err != nil {
				return err
			}
			if err := send(ss, "echo:"+v); err != nil {
				return err
			}
		}
	}}
	cc := through(t, serve(t, e), build(t, stages.Stack[*troupegrpc.Call, troupegrpc.Result]().
		Hedge(hedge.Delay(20*time.Millisecond), hedge.NoBudget())))
	s, err := cc.NewStream(t.Context(), bidiDesc, mBidi)
	require.NoError(t, err)
	require.NoError(t, send(s, "a"))
	require.NoError(t, send(s, "b"))
	for _, want := range []string{"echo:a", "echo:b"} {
		v, err := recv(s)
		require.NoError(t, err)
		require.Equal(t, want, v)
	}
	require.NoError(t, send(s, "c"))
	v, err := recv(s)
	require.NoError(t, err)
	require.Equal(t, "echo:c", v)
	require.NoError(t, s.CloseSend())
	_, err = recv(s)
	require.Equal(t, io.EOF, err)
	require.Equal(t, []string{"a", "b"}, <-firstSaw, "the loser got what was sent before it lost, and no more")
	require.EqualValues(t, 2, e.streamCalls.Load())
}

// spec: G1
func TestG1_ManyStreamsRetriedAtOnce(t *testing.T) {
	var mu sync.Mutex
	tries := map[string]int{}
	e := &echo{stream: func(n int32, ss grpc.ServerStream) error {
		id, err := recv(ss)
		if err != nil {
			return err
		}
		mu.Lock()
		tries[id]++
		first := tries[id] == 1
		mu.Unlock()
		if first {
			return errDown
		}
		for {
			if err := send(ss, id); err != nil {
				return err
			}
			if _, err := recv(ss); err != nil {
				if err == io.EOF {
					return nil
				}
				return err
			}
		}
	}}
	cc := through(t, serve(t, e), build(t, stack()))
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			id := fmt.Sprint("s", i)
			s, err := cc.NewStream(t.Context(), bidiDesc, mBidi)
			if !assert.NoError(t, err) {
				return
			}
			assert.NoError(t, send(s, id))
			for j := range 3 {
				v, err := recv(s)
				assert.NoError(t, err)
				assert.Equal(t, id, v)
				assert.NoError(t, send(s, fmt.Sprint(j)))
			}
			assert.NoError(t, s.CloseSend())
			_, err = recvAll(s)
			assert.Equal(t, io.EOF, err)
		})
	}
	wg.Wait()
	require.Len(t, tries, 16)
	for id, n := range tries {
		require.Equal(t, 2, n, id)
	}
}

// strCodec carries *string messages, which are not protocol buffers, as
// wrapperspb.StringValue's bytes.
type strCodec struct{}

func (strCodec) Name() string { return "proto" }

func (strCodec) Marshal(v any) ([]byte, error) { return proto.Marshal(wrapperspb.String(*v.(*string))) }

func (strCodec) Unmarshal(b []byte, v any) error {
	m := new(wrapperspb.StringValue)
	if err := proto.Unmarshal(b, m); err != nil {
		return err
	}
	*v.(*string) = m.GetValue()
	return nil
}

// spec: G1
func TestG1_AStreamThatSentAMessageItCannotCopyIsNotRetried(t *testing.T) {
	e := &echo{stream: func(n int32, ss grpc.ServerStream) error {
		if _, err := collect(ss); err != nil {
			return err
		}
		return errDown
	}}
	cc := through(t, serve(t, e), build(t, stack()))
	s, err := cc.NewStream(t.Context(), clientDesc, mClient, grpc.ForceCodec(strCodec{}))
	require.NoError(t, err)
	m := "not a protocol buffer"
	require.NoError(t, s.SendMsg(&m))
	require.NoError(t, s.CloseSend())
	var out string
	err = s.RecvMsg(&out)
	require.Equal(t, codes.Unavailable, status.Code(err))
	require.EqualValues(t, 1, e.streamCalls.Load())
}

// spec: EG11
func TestAHedgedUnaryCallLeavesTheCallersMessagesAloneOnceItReturns(t *testing.T) {
	// Below the stack, inside each attempt, an interceptor holds the hedge
	// until it lost, then reads its request (as a logging interceptor
	// would) and sends it; it counts the attempts in flight. The original
	// is answered once the hedge is in flight.
	hedgeIn := make(chan struct{})
	var entered, inFlight atomic.Int32
	inside := func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn,
		invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		inFlight.Add(1)
		defer inFlight.Add(-1)
		if entered.Add(1) == 2 {
			close(hedgeIn)
			<-ctx.Done()
			_ = req.(*wrapperspb.StringValue).GetValue()
		}
		return invoker(ctx, method, req, reply, cc, opts...)
	}
	e := &echo{unary: func(_ context.Context, n int32, in string) (string, error) {
		if n == 1 {
			<-hedgeIn
		}
		return in, nil
	}}
	svc := build(t, stages.Stack[*troupegrpc.Call, troupegrpc.Result]().
		Hedge(hedge.Delay(20*time.Millisecond), hedge.NoBudget()))
	cc := dial(t, serve(t, e), grpc.WithChainUnaryInterceptor(troupegrpc.UnaryClientInterceptor(svc), inside))
	req, reply := wrapperspb.String("x"), new(wrapperspb.StringValue)
	require.NoError(t, cc.Invoke(t.Context(), mUnary, req, reply))
	require.Equal(t, "x", reply.GetValue())
	// The caller's messages are its own again: -race sees any attempt
	// that still reads them.
	req.Value, reply.Value = "reused", "reused"
	require.Zero(t, inFlight.Load(), "no attempt is left running once the call returned")
	require.EqualValues(t, 2, entered.Load())
}

// spec: EG11
func TestACommittedStreamEndsWithItsAttemptsOwnStatusWhateverAttemptEndsLast(t *testing.T) {
	// The hedge reaches the leaf while the original streams, and goes on
	// once the hedge stage has judged the original's outcome (its Final,
	// the default rule, says when): it opens no stream, so its outcome is
	// the internal ErrCommitted, and it is the last the stage sees.
	atLeaf, judged := make(chan struct{}), make(chan struct{})
	var once sync.Once
	final := func(_ troupegrpc.Result, err error) bool {
		once.Do(func() { close(judged) })
		return err == nil
	}
	var n atomic.Int32
	leaf := actors.Func(func(ctx context.Context, c *troupegrpc.Call) (troupegrpc.Result, error) {
		if n.Add(1) > 1 {
			close(atLeaf)
			<-judged
		}
		return troupe.Do(ctx, troupegrpc.Invoke(), c)
	})
	e := &echo{stream: func(_ int32, ss grpc.ServerStream) error {
		if err := send(ss, "a"); err != nil {
			return err
		}
		<-atLeaf
		return status.Error(codes.DataLoss, "lost")
	}}
	st, err := stages.Stack[*troupegrpc.Call, troupegrpc.Result]().
		Hedge(hedge.Delay(10*time.Millisecond), hedge.NoBudget(), hedge.Final[*troupegrpc.Call](final)).
		Build(troupetest.NewSystem(t), leaf)
	require.NoError(t, err)
	cc := through(t, serve(t, e), st)
	s := openServerStream(t, cc, "x")
	got, err := recvAll(s)
	require.Equal(t, []string{"a"}, got)
	requireStatus(t, status.Error(codes.DataLoss, "lost"), err, "the stream's own status")
	require.NotErrorIs(t, err, troupegrpc.ErrCommitted)
	require.EqualValues(t, 2, n.Load())
}
