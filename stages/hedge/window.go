package hedge

import (
	"math"
	"slices"
	"sync"
	"time"
)

// window keeps the latencies of recent successful attempts, for the
// percentile delay: at most max of them, none older than span. It keeps
// them twice: in arrival order (a ring, to forget the oldest) and sorted
// (so that a percentile is one index). Recording costs a binary search and
// a copy of at most max durations; reading a percentile costs nothing more
// than forgetting what expired. Times come in as arguments.
//
// A window is safe for concurrent use: attempts record from the goroutines
// that complete them, the stage's actor reads.
type window struct {
	span time.Duration
	max  int
	base time.Time // sample times are kept as offsets from base

	mu     sync.Mutex
	at     []time.Duration // ring of arrival offsets; guarded by mu
	val    []time.Duration // ring of latencies, aligned with at; guarded by mu
	head   int             // the oldest sample's place in the ring; guarded by mu
	n      int             // samples held; guarded by mu
	sorted []time.Duration // the n latencies, ascending; guarded by mu
}

func newWindow(span time.Duration, max int, now time.Time) *window {
	return &window{span: span, max: max, base: now}
}

// record adds a latency d measured at now, forgetting the oldest sample
// when the window is full.
func (w *window) record(now time.Time, d time.Duration) {
	off := now.Sub(w.base)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.at == nil {
		w.at, w.val = make([]time.Duration, w.max), make([]time.Duration, w.max)
		w.sorted = make([]time.Duration, 0, w.max)
	}
	w.expire(off)
	if w.n == w.max {
		w.dropOldest()
	}
	i := (w.head + w.n) % w.max
	w.at[i], w.val[i] = off, d
	w.n++
	j, _ := slices.BinarySearch(w.sorted, d)
	w.sorted = slices.Insert(w.sorted, j, d)
}

// percentile returns the nearest-rank p-th percentile of the samples at
// now, and how many there are; ok is false when there are fewer than min.
func (w *window) percentile(now time.Time, p float64, min int) (d time.Duration, n int, ok bool) {
	off := now.Sub(w.base)
	w.mu.Lock()
	defer w.mu.Unlock()
	w.expire(off)
	if w.n < min || w.n == 0 {
		return 0, w.n, false
	}
	return w.sorted[rank(p, w.n)-1], w.n, true
}

// count returns how many samples count at now.
func (w *window) count(now time.Time) int {
	_, n, _ := w.percentile(now, 100, math.MaxInt)
	return n
}

// rank is the nearest rank of the p-th percentile of n samples: the
// smallest k such that k/n >= p/100, between 1 and n. The tolerance keeps
// a product like 99.9*1000 from rounding up to the next rank.
func rank(p float64, n int) int {
	x := p * float64(n) / 100
	k := int(math.Ceil(x - 1e-9*math.Max(1, x)))
	return min(max(k, 1), n)
}

// expire forgets the samples older than the span at offset off (mu held).
func (w *window) expire(off time.Duration) {
	for w.n > 0 && off-w.at[w.head] >= w.span {
		w.dropOldest()
	}
}

// dropOldest forgets the oldest sample (mu held, n > 0).
func (w *window) dropOldest() {
	d := w.val[w.head]
	j, _ := slices.BinarySearch(w.sorted, d)
	w.sorted = slices.Delete(w.sorted, j, j+1)
	w.head = (w.head + 1) % w.max
	w.n--
}
