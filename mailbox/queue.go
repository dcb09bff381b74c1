package mailbox

import "sync"

// ring is a FIFO of user messages. It never holds more than the mailbox's
// capacity, so it is allocated once, at that size.
type ring struct {
	buf        []any
	head, size int
}

func (r *ring) push(v any) {
	r.buf[(r.head+r.size)%len(r.buf)] = v
	r.size++
}

func (r *ring) pop() any {
	v := r.buf[r.head]
	r.buf[r.head] = nil
	r.head = (r.head + 1) % len(r.buf)
	r.size--
	return v
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
