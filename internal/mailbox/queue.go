package mailbox

import "sync"

// ring is a FIFO of messages, for every queue of a mailbox. It grows on
// demand, by doubling, from nothing: an idle stage, or one whose messages
// are taken as they come, holds no buffer, whatever its capacity (up to
// MaxCapacity). It gives memory back after a burst: when a pop leaves it at
// most a quarter full, and its buffer is larger than keepSlots, the buffer
// is halved, so that its length stays within 4 times the messages it holds
// (or keepSlots); the copies a halving makes are paid for by the pushes that
// grew it. Its length is a power of two.
type ring struct {
	buf        []any
	head, size int
}

// keepSlots is the buffer a ring keeps however few messages it holds: a
// stage that queues a few at a time does not reallocate back and forth.
// 16 slots are 256 bytes, about half of an idle mailbox.
const keepSlots = 16

func (r *ring) push(v any) {
	if r.size == len(r.buf) {
		r.resize(max(4, 2*len(r.buf)))
	}
	r.buf[(r.head+r.size)&(len(r.buf)-1)] = v
	r.size++
}

func (r *ring) len() int { return r.size }

func (r *ring) pop() any {
	v := r.buf[r.head]
	r.buf[r.head] = nil
	r.head = (r.head + 1) & (len(r.buf) - 1)
	r.size--
	if n := len(r.buf); n > keepSlots && r.size <= n/4 {
		r.resize(n / 2)
	}
	return v
}

// resize moves the messages to a buffer of n slots (a power of two, at
// least r.size), keeping their order.
func (r *ring) resize(n int) {
	buf := make([]any, n)
	for i := range r.size {
		buf[i] = r.buf[(r.head+i)&(len(r.buf)-1)]
	}
	r.buf, r.head = buf, 0
}

// drain empties r, giving its buffer back, and returns what it held.
func (r *ring) drain() []any {
	out := make([]any, 0, r.size)
	for i := range r.size {
		out = append(out, r.buf[(r.head+i)&(len(r.buf)-1)])
	}
	r.buf, r.head, r.size = nil, 0, 0
	return out
}

// queues holds the message queues. The counters are written under mu and
// read without it by the run loop's idle check.
//
// The user queue never holds more than the mailbox's capacity (each
// message fills a reserved slot). The others are bounded by their posters:
// system messages by protoactor's lifecycle, and control messages by the
// stage that owns the mailbox, which posts each one for an event it
// already counts (an outcome of a request it holds or has in flight, a
// waiter's grant, a timer firing, a context that ended, a Close), so that
// its control queue holds at most a few messages per such request and
// timer (see stagekit.Stage.PostControl).
type queues struct {
	mu      sync.Mutex
	system  ring // guarded by mu
	urgent  ring // guarded by mu; control messages that pass a suspension
	control ring // guarded by mu
	user    ring // guarded by mu
	stopped bool // guarded by mu; once set, nothing more is queued
}
