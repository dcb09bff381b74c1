// Package budget is a retry budget shared by every session of a Retry
// stage, so that retries cannot amplify an outage: each request deposits
// into it, each retry withdraws, and retries stop once it is spent.
//
// Its rules are tower's TpsBudget, made exact: within a time-to-live window,
// n requests deposited at ratio r allow floor(n*r) retries, plus a floor of
// minPerSec retries per second of the window that is always allowed (so a
// quiet service can still retry). With tower's defaults (10 s window, 10
// retries per second floor, ratio 0.2) and no traffic, 100 retries are
// allowed per 10 s; every 5 requests deposited allow one more. Tower reads
// the ratio through 1/r, truncated, so that 0.6 allows a retry per request
// and 0.4 one per two; here the ratio is the nearest fraction p/q with q up
// to one million (0.6 is 3/5, 1/3.0 is 1/3), and the budget counts in
// integer units: a request deposits p, a retry costs q.
//
// A Budget is safe for concurrent use; share it by pointer.
package budget

import (
	"sync"
	"time"

	"github.com/troupe-go/troupe/internal/opt"
	"github.com/troupe-go/troupe/internal/sat"
)

const slots = 10 // the window is kept as 10 slots of ttl/10 each

// Budget is a retry budget. Create it with New or Default.
//
// It is safe for concurrent use: one budget may be shared by many stages.
type Budget struct {
	slotLen  time.Duration
	reserve  int64 // units always allowed per window (the floor): a multiple of withdraw
	deposit  int64 // units one request adds: the ratio's numerator
	withdraw int64 // units one retry costs: the ratio's denominator

	mu    sync.Mutex
	slot  [slots]int64 // units deposited (+) and withdrawn (-) per slot; guarded by mu
	cur   int          // the slot being written; guarded by mu
	start time.Time    // when slot cur began; guarded by mu
	next  time.Time    // start + slotLen: before it, advance has nothing to do; guarded by mu
}

// New returns a budget over a window of ttl (1 s to 60 s) that always
// allows minPerSec retries per second of the window (minPerSec*ttl, rounded
// down) and, on top, ratio retries per request: 0, or between one in a
// million and 1000 (0.2 means one retry per five requests). A bad argument,
// NaN included, is a *troupe.ConfigError.
func New(ttl time.Duration, minPerSec int, ratio float64) (*Budget, error) {
	switch {
	case ttl < time.Second || ttl > time.Minute:
		return nil, opt.Bad("budget", "ttl", ttl, "need 1s to 60s")
	case minPerSec < 0:
		return nil, opt.Bad("budget", "minPerSec", minPerSec, "must not be negative")
	case !(ratio >= 0 && ratio <= 1000):
		return nil, opt.Bad("budget", "ratio", ratio, "need 0 to 1000")
	}
	p, q := fraction(ratio)
	if p == 0 && ratio > 0 {
		return nil, opt.Bad("budget", "ratio", ratio, "below one in a million (use 0 for none)")
	}
	b := &Budget{slotLen: ttl / slots, start: time.Now(), deposit: p, withdraw: q}
	b.next = b.start.Add(b.slotLen)
	m := int64(minPerSec)
	floor := sat.Add(sat.Mul(m, int64(ttl/time.Second)), sat.Mul(m, int64(ttl%time.Second))/int64(time.Second))
	b.reserve = sat.Mul(floor, q)
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
	b.slot[b.cur] = sat.Add(b.slot[b.cur], b.deposit)
}

// WithdrawAt is Withdraw at time now.
func (b *Budget) WithdrawAt(now time.Time) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.advance(now)
	if b.balance() < b.withdraw {
		return false
	}
	b.slot[b.cur] -= b.withdraw // the balance covers it: no overflow
	return true
}

// RemainingAt is Remaining at time now.
func (b *Budget) RemainingAt(now time.Time) int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.advance(now)
	return max(0, b.balance()/b.withdraw)
}

// balance is the units the window affords, saturating rather than
// overflowing.
func (b *Budget) balance() int64 {
	sum := b.reserve
	for _, v := range b.slot {
		sum = sat.Add(sum, v)
	}
	return sum
}

// advance moves the window to now: slots older than the window are
// forgotten, deposits and withdrawals alike. Time that goes backwards is
// ignored.
func (b *Budget) advance(now time.Time) {
	if now.Before(b.next) {
		return // the usual case, without a division
	}
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
	b.next = b.start.Add(b.slotLen)
}
