package balance_test

import (
	"context"
	"math/rand/v2"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/backoff"
	"github.com/troupe-go/troupe/stages/balance"
)

// seeded makes the picks the same every run.
var seeded = balance.WithSource(rand.NewPCG(1, 2))

// newBalancer returns a balancer over endpoints inserted by key, closed
// when the test ends.
func newBalancer(t *testing.T, eps map[string]troupe.Service[int, int], opts ...balance.Option[int]) *balance.Balancer[string, int, int] {
	t.Helper()
	b, err := balance.New[string, int, int](nil, append([]balance.Option[int]{seeded}, opts...)...)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, b.Close(context.Background())) })
	for k, svc := range eps {
		require.True(t, b.Insert(k, svc))
	}
	return b
}

// stats returns the balancer's stats by key.
func stats(b *balance.Balancer[string, int, int]) map[string]balance.EndpointStats[string] {
	out := map[string]balance.EndpointStats[string]{}
	for _, s := range b.Stats() {
		out[s.Key] = s
	}
	return out
}

// counted is an endpoint that answers its request and counts its calls.
type counted struct {
	calls atomic.Int64
	fail  atomic.Bool
}

var errDown = &downError{}

type downError struct{}

func (*downError) Error() string { return "endpoint down" }

func (c *counted) svc() *actors.FuncService[int, int] {
	return actors.Func(func(_ context.Context, v int) (int, error) {
		c.calls.Add(1)
		if c.fail.Load() {
			return 0, errDown
		}
		return v, nil
	})
}

// blocking is an endpoint whose calls wait for the test to let them go.
type blocking struct {
	calls   atomic.Int64
	release chan struct{}
}

func newBlocking() *blocking { return &blocking{release: make(chan struct{})} }

func (bl *blocking) svc() *actors.FuncService[int, int] {
	return actors.Func(func(ctx context.Context, v int) (int, error) {
		bl.calls.Add(1)
		select {
		case <-bl.release:
			return v, nil
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	})
}

// randSource returns a source seeded with seed.
func randSource(seed uint64) rand.Source { return rand.NewPCG(seed, seed^0x9e3779b97f4a7c15) }

// backoffZero is a backoff made without backoff.New: its zero delays are
// WithBackoff's error.
var backoffZero = backoff.Exponential{}
