package mapping_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/stages"
	"github.com/troupe-go/troupe/stages/mapping"
	"github.com/troupe-go/troupe/stages/timeout"
	"github.com/troupe-go/troupe/troupetest"
)

var errFlaky = errors.New("flaky")

// A Retry outside an Err sees the mapped error: marking the inner error
// permanent stops the retries, which without the mapping cure it.
//
// spec: BAL4
func TestARetryOutsideErrSeesTheMappedError(t *testing.T) {
	sys := troupetest.NewSystem(t)
	for _, tc := range []struct {
		name  string
		layer bool
		calls int32
	}{{"without the mapping", false, 2}, {"with it", true, 1}} {
		t.Run(tc.name, func(t *testing.T) {
			var calls atomic.Int32
			inner := actors.Func(func(_ context.Context, v int) (int, error) {
				if calls.Add(1) == 1 {
					return 0, errFlaky
				}
				return v, nil
			})
			b := stages.Stack[int, int]().Retry(3, nil)
			if tc.layer {
				b = b.Layer(mapping.ErrLayer[int, int](troupe.Permanent))
			}
			st, err := b.Build(sys, inner)
			require.NoError(t, err)
			defer st.Close(context.Background())
			_, err = troupe.Do(context.Background(), st, 1)
			assert.Equal(t, tc.calls, calls.Load())
			if tc.layer {
				assert.ErrorIs(t, err, troupe.ErrPermanent)
				assert.ErrorIs(t, err, errFlaky)
			} else {
				assert.NoError(t, err)
			}
		})
	}
}

// A Timeout inside a Response: a call that times out is the timeout's
// error and the response function never runs; one in time is converted.
//
// spec: BAL4
func TestATimeoutInsideAResponseIsPassedOnUnconverted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sys := troupetest.NewSystem(t)
		var converted atomic.Int32
		slow := actors.Func(func(ctx context.Context, d time.Duration) (time.Duration, error) {
			select {
			case <-time.After(d):
				return d, nil
			case <-ctx.Done():
				return 0, ctx.Err()
			}
		})
		st, err := stages.Stack[time.Duration, time.Duration]().
			Layer(mapping.ResponseLayer[time.Duration](func(d time.Duration) (time.Duration, error) {
				converted.Add(1)
				return 2 * d, nil
			})).
			Timeout(time.Second).Build(sys, slow)
		require.NoError(t, err)
		defer st.Close(context.Background())
		_, err = troupe.Do(context.Background(), st, time.Minute)
		assert.ErrorIs(t, err, timeout.ErrTimeout)
		assert.Zero(t, converted.Load())
		got, err := troupe.Do(context.Background(), st, time.Millisecond)
		require.NoError(t, err)
		assert.Equal(t, 2*time.Millisecond, got)
	})
}

// Each combinator, as a layer, composes with a Retry, a Timeout and a
// Limit both outside and inside it: the flaky first attempt is retried and
// the conversion applies once.
//
// spec: BAL4
func TestEachCombinatorComposesWithRetryTimeoutAndLimit(t *testing.T) {
	layers := map[string]struct {
		l    troupe.Layer[int, int]
		want func(int) int
	}{
		"Request":  {mapping.RequestLayer[int, int](func(_ context.Context, v int) (int, error) { return v + 1, nil }), func(v int) int { return v + 1 }},
		"Response": {mapping.ResponseLayer[int](func(v int) (int, error) { return v * 10, nil }), func(v int) int { return v * 10 }},
		"Err":      {mapping.ErrLayer[int, int](func(err error) error { return fmt.Errorf("mapped: %w", err) }), func(v int) int { return v }},
		"AndThen":  {mapping.AndThenLayer[int](func(_ context.Context, v int) (int, error) { return v + 100, nil }), func(v int) int { return v + 100 }},
	}
	for name, c := range layers {
		for _, outside := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/policies outside: %v", name, outside), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					sys := troupetest.NewSystem(t)
					var calls atomic.Int32
					inner := actors.Func(func(_ context.Context, v int) (int, error) {
						if calls.Add(1) == 1 {
							return 0, errFlaky
						}
						return v, nil
					})
					b := stages.Stack[int, int]()
					policies := func(b stages.Builder[int, int]) stages.Builder[int, int] {
						return b.Retry(2, nil).Timeout(time.Second).Limit(1)
					}
					if outside {
						b = policies(b).Layer(c.l)
					} else {
						b = policies(b.Layer(c.l))
					}
					st, err := b.Build(sys, inner)
					require.NoError(t, err)
					defer st.Close(context.Background())
					got, err := troupe.Do(context.Background(), st, 7)
					require.NoError(t, err)
					assert.Equal(t, c.want(7), got)
					assert.EqualValues(t, 2, calls.Load())
				})
			})
		}
	}
}
