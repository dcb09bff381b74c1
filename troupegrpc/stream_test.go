package troupegrpc_test

import (
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/troupe-go/troupe/stages/retry"
	"github.com/troupe-go/troupe/troupegrpc"
)

var errDown = status.Error(codes.Unavailable, "down")

// spec: G1
func TestG1_ServerStreamIsRetriedBeforeItsFirstMessage(t *testing.T) {
	e := &echo{stream: func(n int32, ss grpc.ServerStream) error {
		in, err := recv(ss)
		if err != nil {
			return err
		}
		if n == 1 {
			return errDown
		}
		for i := range 3 {
			if err := send(ss, fmt.Sprintf("%s%d", in, i)); err != nil {
				return err
			}
		}
		return nil
	}}
	cc := through(t, serve(t, e), build(t, stack()))
	s := openServerStream(t, cc, "x")
	got, err := recvAll(s)
	require.Equal(t, io.EOF, err)
	require.Equal(t, []string{"x0", "x1", "x2"}, got, "the request was sent again")
	require.EqualValues(t, 2, e.streamCalls.Load())
}

// spec: G1
func TestG1_ServerStreamIsNotRetriedAfterItsFirstMessage(t *testing.T) {
	e := &echo{stream: func(n int32, ss grpc.ServerStream) error {
		if err := send(ss, "a"); err != nil {
			return err
		}
		return errDown
	}}
	cc := through(t, serve(t, e), build(t, stack()))
	s := openServerStream(t, cc, "x")
	got, err := recvAll(s)
	require.Equal(t, []string{"a"}, got)
	require.Equal(t, codes.Unavailable, status.Code(err))
	require.NotErrorIs(t, err, retry.ErrExhausted, "the stream's own error, never retried")
	require.EqualValues(t, 1, e.streamCalls.Load())
}

// collect reads a client stream's messages until its end.
func collect(ss grpc.ServerStream) ([]string, error) {
	got, err := recvAll(ss)
	if err == io.EOF {
		err = nil
	}
	return got, err
}

// spec: G1
func TestG1_ClientStreamIsRetriedWithWhatWasSent(t *testing.T) {
	for _, tc := range []struct {
		name string
		read int // messages the first attempt reads before it fails; -1: all
	}{{"after reading them all", -1}, {"after reading one", 1}, {"before reading", 0}} {
		t.Run(tc.name, func(t *testing.T) {
			seen := make(chan []string, 2)
			e := &echo{stream: func(n int32, ss grpc.ServerStream) error {
				if n == 1 && tc.read >= 0 {
					var got []string
					for range tc.read {
						v, err := recv(ss)
						if err != nil {
							return err
						}
						got = append(got, v)
					}
					seen <- got
					return errDown
				}
				got, err := collect(ss)
				if err != nil {
					return err
				}
				seen <- got
				if n == 1 {
					return errDown
				}
				return ss.SendMsg(wrap(strings.Join(got, "+")))
			}}
			cc := through(t, serve(t, e), build(t, stack()))
			s, err := cc.NewStream(t.Context(), clientDesc, mClient)
			require.NoError(t, err)
			for _, v := range []string{"a", "b", "c"} {
				require.NoError(t, send(s, v))
			}
			require.NoError(t, s.CloseSend())
			out, err := recv(s)
			require.NoError(t, err)
			require.Equal(t, "a+b+c", out)
			require.EqualValues(t, 2, e.streamCalls.Load())
			<-seen
			require.Equal(t, []string{"a", "b", "c"}, <-seen, "the second attempt got every message")
		})
	}
}

// spec: G1
func TestG1_BidiStreamIsRetriedBeforeItsFirstResponseOnly(t *testing.T) {
	e := &echo{stream: func(n int32, ss grpc.ServerStream) error {
		if n == 1 {
			if _, err := recv(ss); err != nil {
				return err
			}
			return errDown
		}
		for range 2 {
			v, err := recv(ss)
			if err != nil {
				return err
			}
			if err := send(ss, "echo:"+v); err != nil {
				return err
			}
		}
		return errDown
	}}
	cc := through(t, serve(t, e), build(t, stack()))
	s, err := cc.NewStream(t.Context(), bidiDesc, mBidi)
	require.NoError(t, err)
	require.NoError(t, send(s, "a"))
	v, err := recv(s)
	require.NoError(t, err)
	require.Equal(t, "echo:a", v, "answered by the second attempt, which got a again")
	require.NoError(t, send(s, "b"))
	v, err = recv(s)
	require.NoError(t, err)
	require.Equal(t, "echo:b", v)
	_, err = recv(s)
	require.Equal(t, codes.Unavailable, status.Code(err), "committed: not retried")
	require.EqualValues(t, 2, e.streamCalls.Load())
}

// spec: G1
func TestG1_StreamRetriesRunOutWithTheServersStatus(t *testing.T) {
	e := &echo{stream: func(int32, grpc.ServerStream) error { return errDown }}
	cc := through(t, serve(t, e), build(t, stack()))
	s, err := cc.NewStream(t.Context(), bidiDesc, mBidi)
	require.NoError(t, err)
	if err := send(s, "a"); err != nil {
		// The attempts may all have failed already (the server does not
		// wait for the message): as gRPC's, SendMsg then says io.EOF, and
		// RecvMsg the status.
		require.Equal(t, io.EOF, err)
	}
	_, err = recv(s)
	require.Equal(t, codes.Unavailable, status.Code(err))
	require.ErrorIs(t, err, retry.ErrExhausted)
	require.EqualValues(t, 4, e.streamCalls.Load(), "the first attempt and 3 retries")
}

// spec: G1, EG11
func TestG1_StreamHeaderCommitsItWhetherOrNotItsCallerReadsIt(t *testing.T) {
	for _, read := range []bool{true, false} {
		t.Run(fmt.Sprint("read ", read), func(t *testing.T) {
			e := &echo{stream: func(n int32, ss grpc.ServerStream) error {
				if err := ss.SendHeader(nil); err != nil {
					return err
				}
				return errDown
			}}
			cc := through(t, serve(t, e), build(t, stack()))
			s := openServerStream(t, cc, "x")
			if read {
				_, err := s.Header()
				require.NoError(t, err)
			}
			_, err := recvAll(s)
			require.Equal(t, codes.Unavailable, status.Code(err))
			require.NotErrorIs(t, err, retry.ErrExhausted)
			require.EqualValues(t, 1, e.streamCalls.Load(), "the header committed the stream, as gRPC's retries have it")
		})
	}
}

// spec: EG11
func TestAStreamWhoseFirstAttemptFailsBeforeAnyHeaderIsRetriedAlsoFromHeader(t *testing.T) {
	e := &echo{stream: func(n int32, ss grpc.ServerStream) error {
		if n == 1 {
			return errDown // a status alone: no header
		}
		if err := ss.SendHeader(metadata.Pairs("attempt", fmt.Sprint(n))); err != nil {
			return err
		}
		v, err := recv(ss)
		if err != nil {
			return err
		}
		return send(ss, "echo:"+v)
	}}
	cc := through(t, serve(t, e), build(t, stack()))
	s, err := cc.NewStream(t.Context(), bidiDesc, mBidi)
	require.NoError(t, err)
	require.NoError(t, send(s, "a"))
	md, err := s.Header()
	require.NoError(t, err)
	require.Equal(t, []string{"2"}, md.Get("attempt"), "the header of the attempt that answered")
	require.NoError(t, s.CloseSend())
	got, err := recvAll(s)
	require.Equal(t, io.EOF, err)
	require.Equal(t, []string{"echo:a"}, got)
	require.EqualValues(t, 2, e.streamCalls.Load())
}

// spec: G1
func TestG1_StreamPastItsReplayLimitIsNotRetried(t *testing.T) {
	e := &echo{stream: func(n int32, ss grpc.ServerStream) error {
		if _, err := collect(ss); err != nil {
			return err
		}
		return errDown
	}}
	cc := dial(t, serve(t, e), grpc.WithStreamInterceptor(
		troupegrpc.StreamClientInterceptor(build(t, stack()), troupegrpc.ReplayLimit(16))))
	s, err := cc.NewStream(t.Context(), clientDesc, mClient)
	require.NoError(t, err)
	require.NoError(t, send(s, "short"))
	require.NoError(t, send(s, strings.Repeat("long", 8)))
	require.NoError(t, s.CloseSend())
	_, err = recv(s)
	require.Equal(t, codes.Unavailable, status.Code(err))
	require.EqualValues(t, 1, e.streamCalls.Load())
}

func wrap(v string) any { return wrapperspb.String(v) }
