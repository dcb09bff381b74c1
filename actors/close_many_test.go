package actors_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/internal/testsys"
)

// spec: CORE6, ACT5
func TestCORE6_ACT5_TenThousandCallersAndACloseInTheMiddle(t *testing.T) {
	const callers = 10_000
	sys := testsys.New(t)
	var seen sync.Map
	var leaf, dup atomic.Int64
	f := actors.Func(func(_ context.Context, id int) (int, error) {
		leaf.Add(1)
		if _, loaded := seen.LoadOrStore(id, true); loaded {
			dup.Add(1)
		}
		return id, nil
	})
	s := stage(t, sys, f, 64)

	var ok, closed, wrong atomic.Int64
	half := make(chan struct{})
	var once sync.Once
	var wg sync.WaitGroup
	for id := range callers {
		wg.Go(func() {
			v, err := troupe.Do[int, int](context.Background(), s, id)
			switch {
			case err == nil && v == id:
				if ok.Add(1) == callers/2 {
					once.Do(func() { close(half) })
				}
			case errors.Is(err, troupe.ErrClosed):
				closed.Add(1)
			default:
				wrong.Add(1)
			}
		})
	}
	<-half
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // close at once: whatever is queued is answered with ErrClosed
	assert.ErrorIs(t, s.Close(ctx), context.Canceled)
	wg.Wait()

	require.Zero(t, wrong.Load(), "a caller got someone else's answer or an unexpected error")
	assert.Equal(t, int64(callers), ok.Load()+closed.Load(), "every caller got exactly one outcome")
	assert.Equal(t, ok.Load(), leaf.Load(), "every request that reached the downstream was answered to its caller")
	assert.Zero(t, dup.Load(), "no request was sent twice")
	assert.Positive(t, closed.Load(), "the close came in the middle")
	assert.Equal(t, 0, s.Mailbox().Stats().Used, "every slot came back")
	t.Logf("%d answered, %d closed", ok.Load(), closed.Load())
}
