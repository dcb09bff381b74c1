package stages_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/stages"
	"github.com/troupe-go/troupe/stages/hedge"
	"github.com/troupe-go/troupe/troupetest"
)

// A Retry or a Hedge sends a request's first attempt on the request
// itself, with a frame of its own on top, only while the request has half
// of its frames free; deeper, the attempt goes in an envelope of its own,
// with a full set of frames for the stages below, as every later attempt
// does. Eight limits (a frame each) above the stage and fourteen below it
// fit only that way.
//
// spec: RT1, H1
func TestRT1_AttemptsDeepInAStackHaveFramesForTheStagesBelow(t *testing.T) {
	errFirst := errors.New("first attempt failed")
	for _, c := range []struct {
		name  string
		stage func(stages.Builder[int, int]) stages.Builder[int, int]
	}{
		{"retry", func(b stages.Builder[int, int]) stages.Builder[int, int] { return b.Retry(1, nil) }},
		{"hedge", func(b stages.Builder[int, int]) stages.Builder[int, int] {
			return b.Hedge(hedge.Delay(time.Hour), hedge.Final[int](func(_ int, err error) bool { return true }))
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var calls atomic.Int32
			fn := actors.Func(func(_ context.Context, v int) (int, error) {
				if calls.Add(1) == 1 && c.name == "retry" {
					return 0, errFirst // the retry's second attempt answers
				}
				return v, nil
			})
			b := stages.Stack[int, int]()
			for range 8 {
				b = b.Limit(4)
			}
			b = c.stage(b)
			for range 14 {
				b = b.Limit(4)
			}
			st, err := b.Build(troupetest.NewSystem(t), fn)
			require.NoError(t, err)
			for i := range 3 {
				calls.Store(0)
				v, err := troupe.Do(context.Background(), st, 7+i)
				require.NoError(t, err)
				assert.Equal(t, 7+i, v)
			}
			require.NoError(t, st.Close(context.Background()))
		})
	}
}
