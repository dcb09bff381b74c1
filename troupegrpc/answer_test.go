package troupegrpc_test

import (
	"context"
	"sync"
	"sync/atomic"
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
	"github.com/troupe-go/troupe/stages/retry"
	"github.com/troupe-go/troupe/troupegrpc"
	"github.com/troupe-go/troupe/troupetest"
)

var errInvalid = status.Error(codes.InvalidArgument, "no such thing")

// judgedFinal returns the hedge stage's default rule (a success ends the
// request) as a Final of its own, which closes the channel it returns once
// it has judged an outcome of code c.
func judgedFinal(c codes.Code) (func(troupegrpc.Result, error) bool, <-chan struct{}) {
	judged := make(chan struct{})
	var once sync.Once
	return func(_ troupegrpc.Result, err error) bool {
		if status.Code(err) == c {
			once.Do(func() { close(judged) })
		}
		return err == nil
	}, judged
}

// requireStatus requires err to be the status want, as gRPC's interop
// cases compare them: by their message.
func requireStatus(t *testing.T, want, err error, msg ...any) {
	t.Helper()
	require.Error(t, err, msg...)
	require.Equal(t, want.Error(), err.Error(), msg...)
}

// spec: EG11
func TestANonRetryableStatusEndsAHedgedUnaryCallUnderARetry(t *testing.T) {
	// The original is answered INVALID_ARGUMENT once the hedge is at the
	// server; the hedge would be answered UNAVAILABLE once the hedge stage
	// has judged the original's answer, and a third call would succeed.
	final, judged := judgedFinal(codes.InvalidArgument)
	hedged := make(chan struct{})
	e := &echo{unary: func(ctx context.Context, n int32, in string) (string, error) {
		switch n {
		case 1:
			<-hedged
			return "", errInvalid
		case 2:
			close(hedged)
			select {
			case <-judged:
				return "", errDown
			case <-ctx.Done():
				return "", status.FromContextError(ctx.Err()).Err()
			}
		}
		return "again:" + in, nil
	}}
	cc := through(t, serve(t, e), build(t, stages.Stack[*troupegrpc.Call, troupegrpc.Result]().
		Layer(troupegrpc.Retry(3, nil)).
		Hedge(hedge.Delay(20*time.Millisecond), hedge.NoBudget(), hedge.Final[*troupegrpc.Call](final))))
	_, err := unary(t.Context(), cc, "x")
	requireStatus(t, errInvalid, err, "the server's answer, as it gave it")
	require.EqualValues(t, 2, e.unaryCalls.Load(), "the call the server answered was not run again")
}

// spec: EG11
func TestANonRetryableStatusEndsAHedgedStreamUnderARetry(t *testing.T) {
	final, judged := judgedFinal(codes.InvalidArgument)
	hedged := make(chan struct{})
	e := &echo{stream: func(n int32, ss grpc.ServerStream) error {
		switch n {
		case 1:
			<-hedged
			return errInvalid
		case 2:
			close(hedged)
			select {
			case <-judged:
				return errDown
			case <-ss.Context().Done():
				return status.FromContextError(ss.Context().Err()).Err()
			}
		}
		return send(ss, "again")
	}}
	cc := through(t, serve(t, e), build(t, stages.Stack[*troupegrpc.Call, troupegrpc.Result]().
		Layer(troupegrpc.Retry(3, nil)).
		Hedge(hedge.Delay(20*time.Millisecond), hedge.NoBudget(), hedge.Final[*troupegrpc.Call](final))))
	s := openServerStream(t, cc, "x")
	got, err := recvAll(s)
	require.Empty(t, got)
	requireStatus(t, errInvalid, err)
	require.EqualValues(t, 2, e.streamCalls.Load())
}

// delayer is a retry.Delayer of a function.
type delayer func(n int) time.Duration

func (d delayer) Delay(n int) time.Duration { return d(n) }

// spec: EG11
func TestANonRetryableStatusEndsAHedgedCallWhoseHedgeWaitsToRetry(t *testing.T) {
	// The hedge is answered UNAVAILABLE and its retry waits 10 s; the
	// original is answered INVALID_ARGUMENT meanwhile.
	backedOff := make(chan struct{})
	var once sync.Once
	bo := delayer(func(int) time.Duration {
		once.Do(func() { close(backedOff) })
		return 10 * time.Second
	})
	e := &echo{unary: func(_ context.Context, n int32, in string) (string, error) {
		switch n {
		case 1:
			<-backedOff
			return "", errInvalid
		case 2:
			return "", errDown
		}
		return "again:" + in, nil
	}}
	cc := through(t, serve(t, e), build(t, stages.Stack[*troupegrpc.Call, troupegrpc.Result]().
		Hedge(hedge.Delay(20*time.Millisecond), hedge.NoBudget()).
		Layer(troupegrpc.Retry(3, bo))))
	start := time.Now()
	_, err := unary(t.Context(), cc, "x")
	requireStatus(t, errInvalid, err)
	require.Less(t, time.Since(start), 5*time.Second, "the hedge's retry stopped waiting once the call was answered")
	require.EqualValues(t, 2, e.unaryCalls.Load())
}

// spec: EG11
func TestARetryOnAnotherCodeSendsACallAgainAfterThatCode(t *testing.T) {
	e := &echo{unary: func(_ context.Context, n int32, in string) (string, error) {
		if n == 1 {
			return "", status.Error(codes.Aborted, "conflict")
		}
		return "ok:" + in, nil
	}}
	cc := through(t, serve(t, e), build(t, stages.Stack[*troupegrpc.Call, troupegrpc.Result]().
		Layer(retry.Layer[*troupegrpc.Call, troupegrpc.Result](retry.Attempts[*troupegrpc.Call, troupegrpc.Result]{
			Max: 2, Retryable: troupegrpc.RetryOn(codes.Aborted),
		}))))
	out, err := unary(t.Context(), cc, "x")
	require.NoError(t, err)
	require.Equal(t, "ok:x", out)
	require.EqualValues(t, 2, e.unaryCalls.Load())
}

// spec: EG10
func TestRetryPolicyNeverRetriesAPanicWhateverItsCode(t *testing.T) {
	e := &echo{unary: func(_ context.Context, _ int32, in string) (string, error) { return in, nil }}
	var calls atomic.Int32
	leaf := actors.Func(func(ctx context.Context, c *troupegrpc.Call) (troupegrpc.Result, error) {
		if calls.Add(1) == 1 {
			panic(errDown) // a bug whose value reads UNAVAILABLE
		}
		return troupe.Do(ctx, troupegrpc.Invoke(), c)
	})
	st, err := stages.Stack[*troupegrpc.Call, troupegrpc.Result]().
		Layer(troupegrpc.Retry(2, nil)).
		Build(troupetest.NewSystem(t), leaf)
	require.NoError(t, err)
	_, err = unary(t.Context(), through(t, serve(t, e), st), "x")
	require.ErrorIs(t, err, troupe.ErrPanic)
	require.EqualValues(t, 1, calls.Load(), "a panic is not retried")
	require.False(t, troupegrpc.Retryable(troupegrpc.Result{}, &troupe.PanicError{Where: "leaf", Value: errDown}))
}
