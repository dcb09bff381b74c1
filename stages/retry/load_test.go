package retry_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/stages/retry"
	"github.com/troupe-go/troupe/stages/retry/budget"
	"github.com/troupe-go/troupe/troupetest"
)

// job is a request that counts its own attempts.
type job struct{ id, attempt int }

// bump retries errors, counting attempts in the request.
type bump struct{}

func (bump) Retry(req *job, _ *string, err *error) (retry.Wait, bool) {
	if *err == nil || req.attempt >= 3 {
		return retry.Wait{}, false
	}
	req.attempt++
	return retry.Wait{}, true
}

func (bump) CloneRequest(req *job) (job, bool) { return *req, true }

var errFirst = errors.New("first attempt fails")

// spec: RT11, CORE6
func TestRT11_TenThousandSessionsRetriesWithinBudget(t *testing.T) {
	const sessions = 10_000
	sys := troupetest.NewSystem(t)
	mock, h := troupetest.NewMock[job, string]()
	h.Allow(1 << 30)
	b, err := budget.New(10*time.Second, 0, 0.2) // no floor: retries are 20 % of requests at most
	require.NoError(t, err)
	r, err := retry.New(sys, mock, bump{}, retry.WithBudget(b), retry.Capacity(512))
	require.NoError(t, err)

	// The mock's side: fail a third of first attempts, answer the rest.
	ctx, stop := context.WithCancel(context.Background())
	var mu sync.Mutex
	attempts := map[job]int{}
	var retries atomic.Int64
	var responders sync.WaitGroup
	for range 8 {
		responders.Go(func() {
			for req := h.Next(ctx); req != nil; req = h.Next(ctx) {
				mu.Lock()
				attempts[req.Value]++
				mu.Unlock()
				if req.Value.attempt > 0 {
					retries.Add(1)
				}
				if req.Value.attempt == 0 && req.Value.id%3 == 0 {
					req.Fail(errFirst)
				} else {
					req.Respond("ok")
				}
			}
		})
	}

	var ok, failed, other atomic.Int64
	var wg sync.WaitGroup
	for id := range sessions {
		wg.Go(func() {
			out, err := troupe.Do[job, string](context.Background(), r, job{id: id})
			switch {
			case err == nil && out == "ok":
				ok.Add(1)
			case errors.Is(err, errFirst) && id%3 == 0:
				failed.Add(1) // the budget said no: the last outcome stands
			default:
				other.Add(1)
			}
		})
	}
	wg.Wait()
	stop()
	responders.Wait()

	assert.Zero(t, other.Load())
	assert.Equal(t, int64(sessions), ok.Load()+failed.Load(), "every session ended exactly once")
	assert.LessOrEqual(t, retries.Load(), int64(sessions/5), "retries never exceed the budget")
	assert.Positive(t, retries.Load())
	assert.Positive(t, failed.Load(), "a third of sessions wanted a retry, more than the budget allows")
	assert.Equal(t, int64(sessions)/3+1, retries.Load()+failed.Load(), "each failed first attempt was retried or returned")
	for j, n := range attempts {
		require.Equal(t, 1, n, "attempt %+v sent twice", j)
	}
	assert.Equal(t, 0, r.Stats().Used, "no slot leaked")
	assert.Equal(t, retry.Sessions{}, r.Sessions())
	t.Logf("%d ok, %d failed after the budget ran out, %d retries", ok.Load(), failed.Load(), retries.Load())
}
