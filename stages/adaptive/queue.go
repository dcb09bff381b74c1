package adaptive

import (
	"context"

	"github.com/troupe-go/troupe/actors/stagekit"
)

// fifo is the line of requests waiting in the stage, first in first out,
// each with the watch on its context once it has waited. Owned by the
// actor. It keeps its array while it has room: pushing and popping one
// request at a time allocates nothing.
type fifo[Req, Res any] struct {
	items []waiter[Req, Res]
	head  int
}

type waiter[Req, Res any] struct {
	e       *stagekit.Envelope[Req, Res]
	unwatch func() bool // stops the watch on e's context; nil when not watched
}

func (q *fifo[Req, Res]) len() int { return len(q.items) - q.head }

func (q *fifo[Req, Res]) push(e *stagekit.Envelope[Req, Res]) {
	q.items = append(q.items, waiter[Req, Res]{e: e})
}

func (q *fifo[Req, Res]) front() *stagekit.Envelope[Req, Res] { return q.items[q.head].e }

// pop takes the first request out of line, and stops watching its context.
func (q *fifo[Req, Res]) pop() *stagekit.Envelope[Req, Res] {
	w := q.items[q.head]
	q.items[q.head] = waiter[Req, Res]{}
	q.head++
	if q.head == len(q.items) {
		q.items, q.head = q.items[:0], 0
	}
	if w.unwatch != nil {
		w.unwatch()
	}
	return w.e
}

// watch starts watching the context of every request in line not watched
// yet: when one ends, fn runs (it posts cancelMsg).
func (q *fifo[Req, Res]) watch(fn func()) {
	for i := q.head; i < len(q.items); i++ {
		w := &q.items[i]
		if w.unwatch == nil && w.e.Ctx.Done() != nil {
			w.unwatch = context.AfterFunc(w.e.Ctx, fn)
		}
	}
}

// dropDone takes out of line the requests whose context has ended, keeping
// the others in order, and answers each with its context's error.
func (q *fifo[Req, Res]) dropDone(answer func(*stagekit.Envelope[Req, Res], error)) {
	var done []*stagekit.Envelope[Req, Res]
	kept := q.items[:q.head]
	for _, w := range q.items[q.head:] {
		if w.e.Ctx.Err() == nil {
			kept = append(kept, w)
			continue
		}
		if w.unwatch != nil {
			w.unwatch()
		}
		done = append(done, w.e)
	}
	clear(q.items[len(kept):])
	q.items = kept
	if q.head == len(q.items) {
		q.items, q.head = q.items[:0], 0
	}
	for _, e := range done {
		answer(e, e.Ctx.Err())
	}
}

// drain takes every request out of line and hands each to fn, in order.
func (q *fifo[Req, Res]) drain(fn func(*stagekit.Envelope[Req, Res])) {
	for q.len() > 0 {
		fn(q.pop())
	}
}
