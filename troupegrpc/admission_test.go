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

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/stages"
	"github.com/troupe-go/troupe/stages/adaptive"
	"github.com/troupe-go/troupe/stages/ratelimit"
	"github.com/troupe-go/troupe/troupegrpc"
)

// spec: G2
func TestG2_ALoadShedInFrontOfAnyLimitRefusesTheOverload(t *testing.T) {
	type builder = stages.Builder[*troupegrpc.ServerCall, any]
	for _, tc := range []struct {
		name  string
		inner func(builder) builder // admits one call, and not a second for a while
	}{
		{"limit", func(b builder) builder { return b.Limit(1) }},
		{"rate limit", func(b builder) builder { return b.RateLimit(ratelimit.Rate{Num: 1, Per: time.Minute}) }},
		{"adaptive limit", func(b builder) builder { return b.Adaptive(adaptive.Limits(1, 1)) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, entered, release := holdingFirst()
			var releasing sync.Once
			releaseFirst := func() { releasing.Do(func() { close(release) }) }
			defer releaseFirst() // a failed check must not leave the first call held
			// What the server answered each call, as it answered it.
			record, answered := recordCodes(3)
			obs := newEvents()
			st := admission(t, tc.inner(stages.Stack[*troupegrpc.ServerCall, any]().Observe(obs, "server").LoadShed()))
			cc := dial(t, serve(t, e, grpc.ChainUnaryInterceptor(record, troupegrpc.UnaryServerInterceptor(st))))
			first := make(chan error, 1)
			go func() {
				_, err := unary(t.Context(), cc, "x")
				first <- err
			}()
			<-entered
			second := make(chan error, 1)
			go func() {
				// Cancelled after 300 ms rather than with a deadline: a rate
				// limit refuses at once a call whose deadline ends before
				// its turn, and y is to wait.
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				stop := time.AfterFunc(300*time.Millisecond, cancel)
				defer stop.Stop()
				_, err := unary(ctx, cc, "y")
				second <- err
			}()
			obs.wait(t, troupe.EventAccepted, "loadshed", 2) // y waits in the load shedder's slot
			var tr metadata.MD
			_, err := unary(t.Context(), cc, "z", grpc.Trailer(&tr))
			require.Equal(t, codes.ResourceExhausted, status.Code(err))
			require.Equal(t, []string{"100"}, tr.Get(troupegrpc.PushbackKey))
			require.Equal(t, codes.ResourceExhausted, <-answered)
			require.Equal(t, codes.Canceled, status.Code(<-second), "y was never admitted")
			require.Contains(t, []codes.Code{codes.DeadlineExceeded, codes.Canceled}, <-answered,
				"the server gave up on y too")
			releaseFirst()
			require.NoError(t, <-first)
			require.EqualValues(t, 1, e.unaryCalls.Load())
		})
	}
}
