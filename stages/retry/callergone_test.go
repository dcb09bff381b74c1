package retry_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/stages/retry"
	"github.com/troupe-go/troupe/stages/timeout"
	"github.com/troupe-go/troupe/troupetest"
)

// Regression: a Timeout above Retry answered the caller, and Retry went on
// sending attempts whose downstream call was handed to a caller who had
// returned: nobody ran them, the session never ended, and Close hung.
//
// spec: T4, CORE6, ACT5
func TestT4_RetryStopsOnceTheOutcomeWasDeliveredAbove(t *testing.T) {
	for _, wait := range []time.Duration{0, time.Millisecond} {
		synctest.Test(t, func(t *testing.T) {
			sys := troupetest.NewSystem(t)
			fn := actors.Func(func(ctx context.Context, _ int) (int, error) { <-ctx.Done(); return 0, ctx.Err() })
			r, err := retry.New(sys, fn, retry.Attempts[int, int]{Max: 1000, Backoff: fixed(wait), Retryable: func(int, error) bool { return true }})
			require.NoError(t, err)
			st, err := troupe.NewBuilder[int, int]().Layer(timeout.Layer[int, int](20*time.Millisecond)).Build(sys, r)
			require.NoError(t, err)
			_, err = troupe.Do(context.Background(), st, 1)
			assert.ErrorIs(t, err, timeout.ErrTimeout)
			synctest.Wait()
			assert.Equal(t, retry.Sessions{}, r.Sessions(), "the session ended with its outcome delivered")
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			assert.NoError(t, st.Close(ctx), "and the stack drains")
		})
	}
}

type fixed time.Duration

func (f fixed) Delay(int) time.Duration { return time.Duration(f) }
