package stages_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/stages"
	"github.com/troupe-go/troupe/stages/hedge"
	"github.com/troupe-go/troupe/troupetest"
)

// attempts is a downstream that notes the attempt each call's context
// says it is, and answers as answer says for the call's number (0 first).
type attempts struct {
	mu   sync.Mutex
	seen []troupe.Attempt
}

func (a *attempts) leaf(answer func(n int) (time.Duration, error)) *actors.FuncService[int, int] {
	return actors.Func(func(ctx context.Context, _ int) (int, error) {
		a.mu.Lock()
		n := len(a.seen)
		a.seen = append(a.seen, troupe.AttemptFrom(ctx))
		a.mu.Unlock()
		d, err := answer(n)
		select {
		case <-time.After(d):
		case <-ctx.Done():
			return 0, ctx.Err()
		}
		return n, err
	})
}

func (a *attempts) got() []troupe.Attempt {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]troupe.Attempt(nil), a.seen...)
}

var errTry = errors.New("try again")

// Each retry's work reads its number from its context; the first try reads
// the zero Attempt.
//
// spec: PP3
func TestAnAttemptKnowsItsRetryNumber(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var a attempts
		st, err := stages.Stack[int, int]().Retry(3, nil).Build(troupetest.NewSystem(t), a.leaf(func(n int) (time.Duration, error) {
			if n < 2 {
				return time.Millisecond, errTry
			}
			return time.Millisecond, nil
		}))
		require.NoError(t, err)
		v, err := troupe.Do(context.Background(), st, 1)
		require.NoError(t, err)
		assert.Equal(t, 2, v)
		assert.Equal(t, []troupe.Attempt{{}, {Retry: 1}, {Retry: 2}}, a.got())
		assert.True(t, a.got()[1].IsRetry())
		assert.False(t, a.got()[0].IsRetry())
	})
}

// A hedge's work reads that it is a hedge, and which; the original reads
// that it is not. Below a Retry, a hedge of a retry reads both numbers.
//
// spec: PP3
func TestAnAttemptKnowsWhetherItIsAHedge(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var a attempts
		st, err := stages.Stack[int, int]().Retry(1, nil).Hedge(hedge.Delay(10*time.Millisecond), hedge.NoBudget()).
			Build(troupetest.NewSystem(t), a.leaf(func(n int) (time.Duration, error) {
				switch n {
				case 0: // the original: slow, hedged, fails
					return 30 * time.Millisecond, errTry
				case 1: // its hedge fails sooner
					return time.Millisecond, errTry
				case 2: // the retry's original: slow, hedged
					return 30 * time.Millisecond, nil
				}
				return time.Millisecond, nil // the retry's hedge wins
			}))
		require.NoError(t, err)
		v, err := troupe.Do(context.Background(), st, 1)
		require.NoError(t, err)
		assert.Equal(t, 3, v)
		assert.Equal(t, []troupe.Attempt{{}, {Hedge: 1}, {Retry: 1}, {Retry: 1, Hedge: 1}}, a.got())
		assert.True(t, a.got()[3].IsHedge())
		synctest.Wait()
	})
}

// A stage of one's own marks its attempts with WithAttempt.
//
// spec: PP3
func TestWithAttemptMarksAContext(t *testing.T) {
	ctx := troupe.WithAttempt(context.Background(), troupe.Attempt{Retry: 2})
	assert.Equal(t, troupe.Attempt{Retry: 2}, troupe.AttemptFrom(ctx))
	assert.Equal(t, troupe.Attempt{}, troupe.AttemptFrom(context.Background()))
}

// failsafe-go's TestHedgePolicy, "all hedges used", as a behaviour check:
// with two hedges 20 ms apart and every attempt 100 ms long, three
// attempts run, and each knows whether it is a hedge (failsafe-go:
// Attempts() > 1 == IsHedge()).
//
// spec: PP3
func TestEveryHedgeKnowsItIsOneAsFailsafeGosDo(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var a attempts
		st, err := stages.Stack[int, int]().Hedge(hedge.Delay(20*time.Millisecond), hedge.MaxHedges(2), hedge.NoBudget()).
			Build(troupetest.NewSystem(t), a.leaf(func(int) (time.Duration, error) { return 100 * time.Millisecond, nil }))
		require.NoError(t, err)
		_, err = troupe.Do(context.Background(), st, 1)
		require.NoError(t, err)
		got := a.got()
		require.Len(t, got, 3)
		for i, at := range got {
			assert.Equal(t, i, at.Hedge)
			assert.Equal(t, i > 0, at.IsHedge())
		}
		synctest.Wait()
	})
}
