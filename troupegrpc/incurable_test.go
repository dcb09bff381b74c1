package troupegrpc_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/stages"
	"github.com/troupe-go/troupe/troupegrpc"
	"github.com/troupe-go/troupe/troupetest"
)

// spec: EG10, EG12
func TestRetryPolicyRetriesNeitherAPanicNorAPermanentError(t *testing.T) {
	down := status.Error(codes.Unavailable, "down, but for good")
	for name, c := range map[string]struct {
		leaf func() (troupegrpc.Result, error)
		want error
	}{
		"panic":     {func() (troupegrpc.Result, error) { panic("a bug below the stack") }, troupe.ErrPanic},
		"permanent": {func() (troupegrpc.Result, error) { return troupegrpc.Result{}, troupe.Permanent(down) }, down},
	} {
		t.Run(name, func(t *testing.T) {
			var n atomic.Int64
			st, err := stages.Stack[*troupegrpc.Call, troupegrpc.Result]().
				Layer(troupegrpc.Retry(3, nil)).
				Build(troupetest.NewSystem(t), actors.Func(func(context.Context, *troupegrpc.Call) (troupegrpc.Result, error) {
					n.Add(1)
					return c.leaf()
				}))
			require.NoError(t, err)
			_, err = troupe.Do(context.Background(), st, nil)
			assert.ErrorIs(t, err, c.want)
			assert.EqualValues(t, 1, n.Load(), "one attempt, though UNAVAILABLE is retryable: no retry can cure it")
			require.NoError(t, st.Close(context.Background()))
		})
	}
}
