package retry

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/troupetest"
)

// Every way a session ends gives back its references, the one it holds on
// the request its first attempt rides included, so that sessions are
// reused: a session that kept one would never go back to its pool, and a
// stage would make a session per request. Under the race detector
// sync.Pool drops a quarter of what it is given, hence a bound of half the
// requests rather than a handful.
//
// spec: RT1
func TestRT1_EveryEndOfASessionGivesItsReferencesBack(t *testing.T) {
	const n = 100
	errAttempt := errors.New("attempt failed")
	for _, c := range []struct {
		name  string
		fails int32 // the first attempts that fail
		want  error
	}{
		{"the first attempt succeeds", 0, nil},
		{"a retry succeeds", 1, nil},
		{"the last retry succeeds", 2, nil},
		{"every attempt fails", 3, errAttempt},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var attempts atomic.Int32
				fn := actors.Func(func(_ context.Context, v int) (int, error) {
					if attempts.Add(1) <= c.fails {
						return 0, errAttempt
					}
					return v, nil
				})
				r, err := New(troupetest.NewSystem(t), fn, Attempts[int, int]{Max: 2})
				require.NoError(t, err)
				var made atomic.Int32
				p := r.b.pool()
				mk := p.New
				p.New = func() any { made.Add(1); return mk() }
				for i := range n {
					attempts.Store(0)
					got := <-troupetest.Go(context.Background(), r, i)
					if c.want != nil {
						assert.ErrorIs(t, got.Err, c.want)
					} else {
						assert.Equal(t, troupetest.Result[int]{Value: i}, got)
					}
				}
				assert.Less(t, int(made.Load()), n/2, "sessions made for %d requests", n)
				assert.Equal(t, Sessions{}, r.Sessions())
				require.NoError(t, r.Close(context.Background()))
			})
		})
	}
}
