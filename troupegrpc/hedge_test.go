package troupegrpc_test

import (
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/troupe-go/troupe/stages"
	"github.com/troupe-go/troupe/stages/hedge"
	"github.com/troupe-go/troupe/troupegrpc"
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
