package troupegrpc_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/stages"
	"github.com/troupe-go/troupe/stages/hedge"
	"github.com/troupe-go/troupe/stages/loadshed"
	"github.com/troupe-go/troupe/stages/retry"
	"github.com/troupe-go/troupe/troupegrpc"
)

// stack is the usual client stack of these tests: limit, timeout, the
// gRPC retry policy with no backoff.
func stack() stages.Builder[*troupegrpc.Call, troupegrpc.Result] {
	return stages.Stack[*troupegrpc.Call, troupegrpc.Result]().
		Limit(8).
		Timeout(10 * time.Second).
		Layer(troupegrpc.Retry(3, nil))
}

// spec: G1
func TestG1_UnaryRetriesUnavailableUntilItSucceeds(t *testing.T) {
	e := &echo{unary: func(_ context.Context, n int32, in string) (string, error) {
		if n <= 2 {
			return "", status.Error(codes.Unavailable, "down")
		}
		return "ok:" + in, nil
	}}
	cc := through(t, serve(t, e), build(t, stack()))
	out, err := unary(t.Context(), cc, "x")
	require.NoError(t, err)
	require.Equal(t, "ok:x", out)
	require.EqualValues(t, 3, e.unaryCalls.Load())
}

// spec: G1
func TestG1_UnaryRetriesOnlyUnavailableAndResourceExhausted(t *testing.T) {
	for _, tc := range []struct {
		code  codes.Code
		calls int32
	}{
		{codes.Unavailable, 2},
		{codes.ResourceExhausted, 2},
		{codes.InvalidArgument, 1},
		{codes.Internal, 1},
		{codes.NotFound, 1},
		{codes.DeadlineExceeded, 1},
		{codes.Aborted, 1},
	} {
		t.Run(tc.code.String(), func(t *testing.T) {
			e := &echo{unary: func(_ context.Context, n int32, in string) (string, error) {
				if n == 1 {
					return "", status.Error(tc.code, "first")
				}
				return "ok", nil
			}}
			cc := through(t, serve(t, e), build(t, stack()))
			_, err := unary(t.Context(), cc, "x")
			if tc.calls == 1 {
				require.Equal(t, tc.code, status.Code(err))
				s, _ := status.FromError(err)
				require.Equal(t, "first", s.Message(), "the server's status, as it is")
			} else {
				require.NoError(t, err)
			}
			require.Equal(t, tc.calls, e.unaryCalls.Load())
		})
	}
}

// spec: G1
func TestG1_UnaryRetriesRunOutWithTheServersStatus(t *testing.T) {
	e := &echo{unary: func(context.Context, int32, string) (string, error) {
		return "", status.Error(codes.Unavailable, "down")
	}}
	cc := through(t, serve(t, e), build(t, stages.Stack[*troupegrpc.Call, troupegrpc.Result]().
		Layer(troupegrpc.Retry(2, nil))))
	_, err := unary(t.Context(), cc, "x")
	require.Equal(t, codes.Unavailable, status.Code(err))
	require.ErrorIs(t, err, retry.ErrExhausted)
	require.EqualValues(t, 3, e.unaryCalls.Load())
}

// spec: G1
func TestG1_UnaryCallOptionsGetTheAttemptThatAnswered(t *testing.T) {
	e := &echo{unary: func(ctx context.Context, n int32, in string) (string, error) {
		_ = grpc.SetHeader(ctx, metadata.Pairs("attempt", fmt.Sprint(n)))
		_ = grpc.SetTrailer(ctx, metadata.Pairs("done", fmt.Sprint(n)))
		if n == 1 {
			return "", status.Error(codes.Unavailable, "down")
		}
		return in, nil
	}}
	cc := through(t, serve(t, e), build(t, stack()))
	var hd, tr metadata.MD
	var p peer.Peer
	out, err := unary(t.Context(), cc, "x", grpc.Header(&hd), grpc.Trailer(&tr), grpc.Peer(&p))
	require.NoError(t, err)
	require.Equal(t, "x", out)
	require.Equal(t, []string{"2"}, hd.Get("attempt"))
	require.Equal(t, []string{"2"}, tr.Get("done"))
	require.NotNil(t, p.Addr)
	require.EqualValues(t, 2, e.unaryCalls.Load())
}

// spec: G1
func TestG1_UnaryDeadlinePropagatesToTheServer(t *testing.T) {
	left := make(chan time.Duration, 1)
	e := &echo{unary: func(ctx context.Context, _ int32, _ string) (string, error) {
		dl, ok := ctx.Deadline()
		require.True(t, ok, "the server sees the deadline")
		left <- time.Until(dl)
		<-ctx.Done()
		return "", status.FromContextError(ctx.Err()).Err()
	}}
	cc := through(t, serve(t, e), build(t, stages.Stack[*troupegrpc.Call, troupegrpc.Result]().
		Timeout(200*time.Millisecond).
		Layer(troupegrpc.Retry(3, nil))))
	_, err := unary(t.Context(), cc, "x")
	require.Equal(t, codes.DeadlineExceeded, status.Code(err))
	// The stage's timer or the deadline it gave the call, whichever
	// ends it first: DEADLINE_EXCEEDED either way.
	require.LessOrEqual(t, <-left, 200*time.Millisecond)
	require.EqualValues(t, 1, e.unaryCalls.Load(), "an ended call is not retried")

	// The caller's own deadline reaches the server through the stack too.
	ctx, cancel := context.WithTimeout(t.Context(), 150*time.Millisecond)
	defer cancel()
	_, err = unary(ctx, cc, "x")
	require.Equal(t, codes.DeadlineExceeded, status.Code(err))
	require.LessOrEqual(t, <-left, 150*time.Millisecond)
	require.EqualValues(t, 2, e.unaryCalls.Load())
}

// spec: G1
func TestG1_UnaryStackErrorsMapToStatusCodes(t *testing.T) {
	e, entered, release := holdingFirst()
	obs := newEvents()
	cc := through(t, serve(t, e), build(t, stages.Stack[*troupegrpc.Call, troupegrpc.Result]().
		Observe(obs, "test").
		LoadShed().
		Limit(1)))
	var calls sync.WaitGroup
	for _, in := range []string{"x", "y"} {
		calls.Go(func() {
			out, err := unary(t.Context(), cc, in)
			assert.NoError(t, err)
			assert.Equal(t, in, out)
		})
		if in == "x" {
			<-entered // x holds the limit
		}
	}
	obs.wait(t, troupe.EventAccepted, "loadshed", 2) // y waits in the load shedder's one slot
	_, err := unary(t.Context(), cc, "z")
	require.Equal(t, codes.ResourceExhausted, status.Code(err))
	require.ErrorIs(t, err, loadshed.ErrOverloaded)
	var te *troupegrpc.Error
	require.ErrorAs(t, err, &te)
	require.Equal(t, codes.ResourceExhausted, te.Code)
	close(release)
	calls.Wait()
	require.EqualValues(t, 2, e.unaryCalls.Load(), "z never reached the server")
}

// spec: G1
func TestG1_UnaryHedgeWinsAndTheOriginalIsCancelled(t *testing.T) {
	cancelled := make(chan struct{})
	e := &echo{unary: func(ctx context.Context, n int32, in string) (string, error) {
		if n == 1 {
			<-ctx.Done()
			close(cancelled)
			return "", status.FromContextError(ctx.Err()).Err()
		}
		return fmt.Sprintf("%s from %d", in, n), nil
	}}
	cc := through(t, serve(t, e), build(t, stages.Stack[*troupegrpc.Call, troupegrpc.Result]().
		Timeout(10*time.Second).
		Hedge(hedge.Delay(20*time.Millisecond), hedge.NoBudget())))
	out, err := unary(t.Context(), cc, "x")
	require.NoError(t, err)
	require.Equal(t, "x from 2", out)
	<-cancelled
	require.EqualValues(t, 2, e.unaryCalls.Load())
}
