package troupegrpc_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/troupe-go/troupe/stages/retry"
	"github.com/troupe-go/troupe/troupegrpc"
)

// spec: G1
func TestG1_ServerPushbackParses(t *testing.T) {
	for _, tc := range []struct {
		md   metadata.MD
		wait time.Duration
		ok   bool
	}{
		{nil, 0, false},
		{metadata.Pairs("other", "1"), 0, false},
		{metadata.Pairs(troupegrpc.PushbackKey, "250"), 250 * time.Millisecond, true},
		{metadata.Pairs(troupegrpc.PushbackKey, "0"), 0, true},
		{metadata.Pairs(troupegrpc.PushbackKey, "-1"), -1, true},
		{metadata.Pairs(troupegrpc.PushbackKey, "soon"), -1, true},
		{metadata.Pairs(troupegrpc.PushbackKey, "1", troupegrpc.PushbackKey, "2"), -1, true},
		{metadata.Pairs(troupegrpc.PushbackKey, "99999999999999999"), time.Duration(1<<63 - 1), true},
	} {
		wait, ok := troupegrpc.ServerPushback(tc.md)
		require.Equal(t, tc.ok, ok, "%v", tc.md)
		require.Equal(t, tc.wait, wait, "%v", tc.md)
	}
}

type fixed time.Duration

func (f fixed) Delay(int) time.Duration { return time.Duration(f) }

// spec: G1
func TestG1_RetryPolicyWaitsTheLongerOfBackoffAndPushback(t *testing.T) {
	down := status.Error(codes.Unavailable, "down")
	for _, tc := range []struct {
		name     string
		trailer  metadata.MD
		maxPB    time.Duration
		again    bool
		expected time.Duration
	}{
		{"no pushback: the backoff", nil, 0, true, 10 * time.Millisecond},
		{"a longer pushback", metadata.Pairs(troupegrpc.PushbackKey, "250"), 0, true, 250 * time.Millisecond},
		{"a shorter pushback", metadata.Pairs(troupegrpc.PushbackKey, "5"), 0, true, 10 * time.Millisecond},
		{"asked not to retry", metadata.Pairs(troupegrpc.PushbackKey, "-1"), 0, false, 0},
		{"more than the cap", metadata.Pairs(troupegrpc.PushbackKey, "2000"), time.Second, false, 0},
		{"more than the default cap", metadata.Pairs(troupegrpc.PushbackKey, "61000"), 0, false, 0},
		{"pushbacks ignored", metadata.Pairs(troupegrpc.PushbackKey, "-1"), -1, true, 10 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := troupegrpc.RetryPolicy(3, fixed(10*time.Millisecond))
			p.MaxPushback = tc.maxPB
			var c *troupegrpc.Call
			res, err := troupegrpc.Result{Trailer: tc.trailer}, down
			w, again := p.Retry(&c, &res, &err)
			require.Equal(t, tc.again, again)
			require.Equal(t, tc.expected, w.Delay)
			require.Equal(t, down, err, "the error is left as it is")
		})
	}
}

// pushingBack answers Unary with UNAVAILABLE and a pushback of pb the
// first time, then with its request; it records when each call came.
func pushingBack(pb string) (*echo, *[]time.Time) {
	var mu sync.Mutex
	var at []time.Time
	return &echo{unary: func(ctx context.Context, n int32, in string) (string, error) {
		mu.Lock()
		at = append(at, time.Now())
		mu.Unlock()
		if n == 1 {
			_ = grpc.SetTrailer(ctx, metadata.Pairs(troupegrpc.PushbackKey, pb))
			return "", status.Error(codes.Unavailable, "busy")
		}
		return in, nil
	}}, &at
}

// spec: G1
func TestG1_UnaryRetryWaitsForTheServersPushback(t *testing.T) {
	e, at := pushingBack("120")
	cc := through(t, serve(t, e), build(t, stack()))
	out, err := unary(t.Context(), cc, "x")
	require.NoError(t, err)
	require.Equal(t, "x", out)
	require.EqualValues(t, 2, e.unaryCalls.Load())
	require.GreaterOrEqual(t, (*at)[1].Sub((*at)[0]), 120*time.Millisecond)
}

// spec: G1
func TestG1_UnaryIsNotRetriedWhenThePushbackSaysNo(t *testing.T) {
	for _, pb := range []string{"-1", "120000"} { // no, and longer than a minute
		e, _ := pushingBack(pb)
		cc := through(t, serve(t, e), build(t, stack()))
		_, err := unary(t.Context(), cc, "x")
		require.Equal(t, codes.Unavailable, status.Code(err), pb)
		require.NotErrorIs(t, err, retry.ErrExhausted, pb)
		require.EqualValues(t, 1, e.unaryCalls.Load(), pb)
	}
}

// spec: G1
func TestG1_StreamRetryHonoursThePushback(t *testing.T) {
	for _, tc := range []struct {
		pb    string
		calls int32
	}{{"80", 2}, {"-1", 1}} {
		var mu sync.Mutex
		var at []time.Time
		e := &echo{stream: func(n int32, ss grpc.ServerStream) error {
			mu.Lock()
			at = append(at, time.Now())
			mu.Unlock()
			if n == 1 {
				ss.SetTrailer(metadata.Pairs(troupegrpc.PushbackKey, tc.pb))
				return status.Error(codes.ResourceExhausted, "busy")
			}
			return send(ss, "ok")
		}}
		cc := through(t, serve(t, e), build(t, stack()))
		s, err := cc.NewStream(t.Context(), bidiDesc, mBidi)
		require.NoError(t, err)
		require.NoError(t, s.CloseSend())
		got, err := recvAll(s)
		require.EqualValues(t, tc.calls, e.streamCalls.Load(), tc.pb)
		if tc.calls == 1 {
			require.Equal(t, codes.ResourceExhausted, status.Code(err))
			require.Equal(t, []string{tc.pb}, s.Trailer().Get(troupegrpc.PushbackKey))
			continue
		}
		require.Equal(t, []string{"ok"}, got)
		require.GreaterOrEqual(t, at[1].Sub(at[0]), 80*time.Millisecond)
	}
}
