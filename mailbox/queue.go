package mailbox

import "sync"

// ring is a FIFO of user messages. It never holds more than the mailbox's
// capacity (each message fills a reserved slot), and it grows on demand, by
// doubling, from nothing: an idle stage, or one whose messages are taken as
// they come, holds no buffer, whatever its capacity (up to MaxCapacity). It
// does not shrink. Its length is a power of two.
type ring struct {
	buf        []any
	head, size int
}

func (r *ring) push(v any) {
	if r.size == len(r.buf) {
		r.grow()
	}
	r.buf[(r.head+r.size)&(len(r.buf)-1)] = v
	r.size++
}

func (r *ring) pop() any {
	v := r.buf[r.head]
	r.buf[r.head] = nil
	r.head = (r.head + 1) & (len(r.buf) - 1)
	r.size--
	return v
}

// grow doubles the buffer (to 4 from nothing), keeping the order.
func (r *ring) grow() {
	buf := make([]any, max(4, 2*len(r.buf)))
	for i := range r.size {
		buf[i] = r.buf[(r.head+i)&(len(r.buf)-1)]
	}
	r.buf, r.head = buf, 0
}

// fifo is an unbounded FIFO for system and control messages, which are few:
// each answers something the stage already counts.
type fifo struct {
	buf  []any
	head int
}

func (f *fifo) push(v any) { f.buf = append(f.buf, v) }

func (f *fifo) len() int { return len(f.buf) - f.head }

func (f *fifo) pop() any {
	v := f.buf[f.head]
	f.buf[f.head] = nil
	f.head++
	if f.head == len(f.buf) {
		f.buf, f.head = f.buf[:0], 0
	}
	return v
}

// drain empties f and returns what it held.
func (f *fifo) drain() []any {
	out := append([]any(nil), f.buf[f.head:]...)
	clear(f.buf)
	f.buf, f.head = f.buf[:0], 0
	return out
}

// queues holds the three message queues. The counters are written under mu
// and read without it by the run loop's idle check.
type queues struct {
	mu      sync.Mutex
	system  fifo // guarded by mu
	urgent  fifo // guarded by mu; control messages that pass a suspension
	control fifo // guarded by mu
	user    ring // guarded by mu
	stopped bool // guarded by mu; once set, nothing more is queued
}
