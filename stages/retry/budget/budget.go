// Package budget is a retry budget shared by every session of a Retry
// stage, so that retries cannot amplify an outage (SPEC RT11): each request
// deposits into it, each retry withdraws, and retries stop once it is spent.
//
// Its rules are tower's TpsBudget: retries may amount to a ratio of the
// requests seen within a time-to-live window, plus a floor of retries per
// second that is always allowed (so a quiet service can still retry). With
// tower's defaults (10 s window, 10 retries per second floor, ratio 0.2)
// and no traffic, 100 retries are allowed per 10 s; every 5 requests
// deposited allow one more.
//
// A Budget is safe for concurrent use; share it by pointer.
package budget

import (
	"errors"
	"fmt"
	"sync"
	"time"
)

// ErrBadConfig is matched by the error of New with a bad argument.
var ErrBadConfig = errors.New("budget: bad configuration")

const slots = 10 // the window is kept as 10 slots of ttl/10 each

// Budget is a retry budget. Create it with New or Default.
type Budget struct {
	slotLen  time.Duration
	reserve  int64 // units always allowed per window (the floor)
	deposit  int64 // units one request adds
	withdraw int64 // units one retry costs

	mu    sync.Mutex
	slot  [slots]int64 // units deposited (+) and withdrawn (-) per slot; guarded by mu
	cur   int          // the slot being written; guarded by mu
	start time.Time    // when slot cur began; guarded by mu
}

// New returns a budget over a window of ttl (1 s to 60 s) that always
// allows minPerSec retries per second and, on top, ratio retries per
// request (0 to 1000; 0.2 means one retry per five requests).
func New(ttl time.Duration, minPerSec int, ratio float64) (*Budget, error) {
	switch {
	case ttl < time.Second || ttl > time.Minute:
		return nil, fmt.Errorf("%w: ttl %v must be between 1s and 60s", ErrBadConfig, ttl)
	case minPerSec < 0:
		return nil, fmt.Errorf("%w: minPerSec %d must not be negative", ErrBadConfig, minPerSec)
	case !(ratio >= 0 && ratio <= 1000):
		return nil, fmt.Errorf("%w: ratio %v must be between 0 and 1000", ErrBadConfig, ratio)
	}
	b := &Budget{slotLen: ttl / slots, start: time.Now()}
	// Units are chosen so that both amounts are whole numbers.
	switch {
	case ratio == 0:
		b.deposit, b.withdraw = 0, 1
	case ratio <= 1:
		b.deposit, b.withdraw = 1, int64(1/ratio)
	default:
		b.deposit, b.withdraw = 1000, int64(1000/ratio)
	}
	b.reserve = int64(minPerSec) * int64(ttl/time.Second) * b.withdraw
	return b, nil
}

// Default returns a budget with tower's defaults: a 10 s window, a floor of
// 10 retries per second, and retries up to 20 % of requests.
func Default() *Budget {
	b, _ := New(10*time.Second, 10, 0.2)
	return b
}

// Deposit records one request.
func (b *Budget) Deposit() { b.DepositAt(time.Now()) }

// Withdraw spends one retry, reporting false (and spending nothing) when
// the budget cannot afford it.
func (b *Budget) Withdraw() bool { return b.WithdrawAt(time.Now()) }

// Remaining reports how many retries the budget affords now.
func (b *Budget) Remaining() int64 { return b.RemainingAt(time.Now()) }

// DepositAt is Deposit at time now.
func (b *Budget) DepositAt(now time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.advance(now)
	b.slot[b.cur] += b.deposit
}

// WithdrawAt is Withdraw at time now.
func (b *Budget) WithdrawAt(now time.Time) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.advance(now)
	if b.balance() < b.withdraw {
		return false
	}
	b.slot[b.cur] -= b.withdraw
	return true
}

// RemainingAt is Remaining at time now.
func (b *Budget) RemainingAt(now time.Time) int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.advance(now)
	return max(0, b.balance()/b.withdraw)
}

func (b *Budget) balance() int64 {
	sum := b.reserve
	for _, v := range b.slot {
		sum += v
	}
	return sum
}

// advance moves the window to now: slots older than the window are
// forgotten, deposits and withdrawals alike. Time that goes backwards is
// ignored.
func (b *Budget) advance(now time.Time) {
	n := int64(now.Sub(b.start) / b.slotLen)
	if n <= 0 {
		return
	}
	if n >= slots {
		b.slot = [slots]int64{}
		b.cur = 0
	} else {
		for range n {
			b.cur = (b.cur + 1) % slots
			b.slot[b.cur] = 0
		}
	}
	b.start = b.start.Add(time.Duration(n) * b.slotLen)
}
