package budget

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// spec: RT11
func TestRT11_FloorAllowsMinPerSecondWithoutTraffic(t *testing.T) {
	b := Default()
	now := b.start
	n := 0
	for b.WithdrawAt(now) {
		n++
	}
	assert.Equal(t, 100, n, "10 retries per second over a 10 s window")
	assert.False(t, b.WithdrawAt(now.Add(9*time.Second)), "still spent within the window")
	assert.True(t, b.WithdrawAt(now.Add(10*time.Second)), "the window moved on: the floor is back")
}

// spec: RT11
func TestRT11_RatioOfRequests(t *testing.T) {
	b, err := New(10*time.Second, 0, 0.2)
	require.NoError(t, err)
	now := b.start
	assert.False(t, b.WithdrawAt(now), "no floor, no requests: no retry")
	for range 50 {
		b.DepositAt(now)
	}
	n := 0
	for b.WithdrawAt(now) {
		n++
	}
	assert.Equal(t, 10, n, "20 % of 50 requests")
	assert.Equal(t, int64(0), b.RemainingAt(now))
}

// spec: RT11
func TestRT11_DepositsExpireAfterTheWindow(t *testing.T) {
	b, _ := New(10*time.Second, 0, 0.5)
	start := b.start
	for range 10 {
		b.DepositAt(start) // 5 retries' worth, in the first slot
	}
	assert.Equal(t, int64(5), b.RemainingAt(start.Add(9*time.Second)))
	assert.Equal(t, int64(0), b.RemainingAt(start.Add(10*time.Second)), "forgotten after the ttl")
	b.DepositAt(start.Add(10 * time.Second))
	b.DepositAt(start.Add(10 * time.Second))
	assert.Equal(t, int64(1), b.RemainingAt(start.Add(15*time.Second)))
	assert.Equal(t, int64(0), b.RemainingAt(start.Add(time.Hour)), "a long pause forgets everything")
}

// spec: RT11
func TestRT11_RatioAboveOne(t *testing.T) {
	b, _ := New(time.Second, 0, 2)
	b.DepositAt(b.start)
	assert.Equal(t, int64(2), b.RemainingAt(b.start), "two retries per request")
}

// spec: RT11
func TestRT11_ConcurrentUseNeverOverspends(t *testing.T) {
	b, _ := New(10*time.Second, 1, 0.2)
	var wg sync.WaitGroup
	var mu sync.Mutex
	won := 0
	for range 8 {
		wg.Go(func() {
			for range 100 {
				b.Deposit()
				if b.Withdraw() {
					mu.Lock()
					won++
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	assert.LessOrEqual(t, won, 10+800/5, "floor 10 + 20 % of 800 requests")
}

func TestBadConfigIsAnError(t *testing.T) {
	for _, c := range []struct {
		ttl   time.Duration
		min   int
		ratio float64
	}{{0, 1, 0.2}, {2 * time.Minute, 1, 0.2}, {time.Second, -1, 0.2}, {time.Second, 1, -1}, {time.Second, 1, 1001}} {
		_, err := New(c.ttl, c.min, c.ratio)
		assert.ErrorIs(t, err, ErrBadConfig)
	}
}
