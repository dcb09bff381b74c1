package troupegrpc_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/stages"
	"github.com/troupe-go/troupe/stages/breaker"
	"github.com/troupe-go/troupe/stages/loadshed"
	"github.com/troupe-go/troupe/stages/ratelimit"
	"github.com/troupe-go/troupe/stages/reconnect"
	"github.com/troupe-go/troupe/stages/retry"
	"github.com/troupe-go/troupe/stages/timeout"
	"github.com/troupe-go/troupe/troupegrpc"
	"github.com/troupe-go/troupe/troupetest"
)

// spec: G1
func TestG1_StackErrorsHaveStatusCodes(t *testing.T) {
	down := status.Error(codes.Unavailable, "down")
	for _, tc := range []struct {
		err  error
		code codes.Code
	}{
		{nil, codes.OK},
		{down, codes.Unavailable},
		{&retry.ExhaustedError{Attempts: 3, Err: down}, codes.Unavailable},
		{fmt.Errorf("wrapped: %w", status.Error(codes.NotFound, "no")), codes.NotFound},
		{&timeout.Error{After: time.Second}, codes.DeadlineExceeded},
		{context.DeadlineExceeded, codes.DeadlineExceeded},
		{context.Canceled, codes.Canceled},
		{loadshed.ErrOverloaded, codes.ResourceExhausted},
		{&breaker.OpenError{State: breaker.Open}, codes.Unavailable},
		{&troupe.ClosedError{Service: "limit"}, codes.Unavailable},
		{&troupe.RestartError{Stage: "limit", Cause: errors.New("x")}, codes.Unavailable},
		{fmt.Errorf("%w: refused", reconnect.ErrConnect), codes.Unavailable},
		{fmt.Errorf("%w: redis down", ratelimit.ErrLimiter), codes.Unavailable},
		{&troupe.PanicError{Where: "leaf", Value: "boom"}, codes.Internal},
		{troupegrpc.ErrNilService, codes.Internal},
		{troupegrpc.ErrNoStream, codes.Internal},
		{troupegrpc.ErrBadReply, codes.Internal},
		{&troupegrpc.Error{Code: codes.Aborted, Err: errors.New("x")}, codes.Aborted},
		{errors.New("anything else"), codes.Unknown},
	} {
		require.Equal(t, tc.code, troupegrpc.Code(tc.err), "%v", tc.err)
	}
}

// spec: G1
func TestG1_ErrorCarriesAStatusAndUnwraps(t *testing.T) {
	err := error(&troupegrpc.Error{Code: codes.DeadlineExceeded, Err: &timeout.Error{After: time.Second}})
	require.Equal(t, codes.DeadlineExceeded, status.Code(err))
	require.ErrorIs(t, err, timeout.ErrTimeout)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	s, ok := status.FromError(err)
	require.True(t, ok)
	require.Contains(t, s.Message(), "timed out")
	require.Equal(t, codes.Internal, status.Code(&troupegrpc.Error{Code: codes.Internal}), "no Err: no panic")
	require.NotEmpty(t, (&troupegrpc.Error{Code: codes.Internal}).Error())
}

// spec: G1
func TestG1_MisuseIsAnErrorNotAPanic(t *testing.T) {
	ctx := t.Context()
	var c *troupegrpc.Call
	require.Empty(t, c.Method())
	require.Equal(t, troupegrpc.Unary, c.Kind())
	require.Nil(t, c.Request())
	var sc *troupegrpc.ServerCall
	require.Empty(t, sc.Method())
	require.Nil(t, sc.Request())
	require.NotNil(t, sc.Context())
	require.Equal(t, "bidi-stream", troupegrpc.BidiStream.String())
	require.Equal(t, "unknown", troupegrpc.Kind(9).String())

	_, err := troupe.Do(ctx, troupegrpc.Invoke(), nil)
	require.ErrorIs(t, err, troupegrpc.ErrNilCall)
	_, err = troupe.Do(ctx, troupegrpc.Handle(), nil)
	require.ErrorIs(t, err, troupegrpc.ErrNilCall)

	e := &echo{unary: func(_ context.Context, _ int32, in string) (string, error) { return in, nil }}
	addr := serve(t, e)
	cc := through(t, addr, nil)
	_, err = unary(ctx, cc, "x")
	require.Equal(t, codes.Internal, status.Code(err))
	require.ErrorIs(t, err, troupegrpc.ErrNilService)
	_, err = cc.NewStream(ctx, bidiDesc, mBidi)
	require.ErrorIs(t, err, troupegrpc.ErrNilService)

	// A stack over a leaf that is not Invoke: nothing fits, nothing panics.
	st, err := stages.Stack[*troupegrpc.Call, troupegrpc.Result]().Limit(1).Build(troupetest.NewSystem(t),
		actors.Func(func(context.Context, *troupegrpc.Call) (troupegrpc.Result, error) {
			return troupegrpc.Result{Reply: "not a message"}, nil
		}))
	require.NoError(t, err)
	cc = through(t, addr, st)
	_, err = unary(ctx, cc, "x")
	require.Equal(t, codes.Internal, status.Code(err))
	require.ErrorIs(t, err, troupegrpc.ErrBadReply)
	_, err = cc.NewStream(ctx, bidiDesc, mBidi)
	require.Equal(t, codes.Internal, status.Code(err))
	require.ErrorIs(t, err, troupegrpc.ErrNoStream)
	require.Zero(t, e.unaryCalls.Load())

	// Server interceptors over a nil stack refuse with Internal.
	cc = dial(t, serve(t, e, grpc.UnaryInterceptor(troupegrpc.UnaryServerInterceptor(nil))))
	_, err = unary(ctx, cc, "x")
	require.Equal(t, codes.Internal, status.Code(err))
}

// spec: EG6
func TestABadInterceptorOptionIsTheErrorOfEveryCall(t *testing.T) {
	ctx := context.Background()
	e := &echo{unary: func(_ context.Context, _ int32, in string) (string, error) { return in, nil }}
	addr := serve(t, e)
	st := build(t, stages.Stack[*troupegrpc.Call, troupegrpc.Result]().Limit(1))
	for name, opt := range map[string]troupegrpc.ClientOption{"nil option": nil, "negative ReplayLimit": troupegrpc.ReplayLimit(-1)} {
		var cc *grpc.ClientConn
		require.NotPanics(t, func() {
			cc = dial(t, addr,
				grpc.WithUnaryInterceptor(troupegrpc.UnaryClientInterceptor(st, opt)),
				grpc.WithStreamInterceptor(troupegrpc.StreamClientInterceptor(st, opt)))
		}, name)
		_, err := unary(ctx, cc, "x")
		require.ErrorIs(t, err, troupe.ErrBadConfig, name)
		_, err = cc.NewStream(ctx, bidiDesc, mBidi)
		require.ErrorIs(t, err, troupe.ErrBadConfig, name)
	}
	admit, err := stages.Stack[*troupegrpc.ServerCall, any]().Limit(1).Build(troupetest.NewSystem(t), troupegrpc.Handle())
	require.NoError(t, err)
	cc := dial(t, serve(t, e,
		grpc.UnaryInterceptor(troupegrpc.UnaryServerInterceptor(admit, nil)),
		grpc.StreamInterceptor(troupegrpc.StreamServerInterceptor(admit, nil))))
	_, err = unary(ctx, cc, "x")
	require.Error(t, err)
	require.Contains(t, err.Error(), "bad option 1 of 1: nil", "a server interceptor with a nil option")
	require.Zero(t, e.unaryCalls.Load())
}
