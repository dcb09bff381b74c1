// Package dheap is a min-heap whose items know their place in it, so that
// any item can be removed in O(log n): the deadline sets of the Timeout and
// Retry stages.
package dheap

// Item is what a Heap holds: it orders itself against another item, and is
// told its place in the heap.
type Item[T any] interface {
	// Less reports whether the item comes before o.
	Less(o T) bool
	// SetIndex is told the item's new place (-1 once it leaves).
	SetIndex(i int)
}

// Heap orders its items by their Less. The zero Heap is empty and ready to
// use. It is not safe for concurrent use: its owner guards it. It holds
// no functions of its own, so an idle owner pays only the slice.
type Heap[T Item[T]] struct {
	items []T
}

// Len is the number of items.
func (h *Heap[T]) Len() int { return len(h.items) }

// Min returns the least item; the heap must not be empty.
func (h *Heap[T]) Min() T { return h.items[0] }

// Push adds x.
func (h *Heap[T]) Push(x T) {
	h.items = append(h.items, x)
	i := len(h.items) - 1
	x.SetIndex(i)
	h.up(i)
}

// Remove takes out the item at place i and returns it.
func (h *Heap[T]) Remove(i int) T {
	x := h.items[i]
	last := len(h.items) - 1
	if i != last {
		h.items[i] = h.items[last]
		h.items[i].SetIndex(i)
	}
	var zero T
	h.items[last] = zero
	h.items = h.items[:last]
	if i != last && !h.down(i) {
		h.up(i)
	}
	x.SetIndex(-1)
	return x
}

// Clear empties the heap, telling every item it left.
func (h *Heap[T]) Clear() {
	for _, x := range h.items {
		x.SetIndex(-1)
	}
	clear(h.items)
	h.items = h.items[:0]
}

func (h *Heap[T]) swap(i, j int) {
	h.items[i], h.items[j] = h.items[j], h.items[i]
	h.items[i].SetIndex(i)
	h.items[j].SetIndex(j)
}

func (h *Heap[T]) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !h.items[i].Less(h.items[p]) {
			return
		}
		h.swap(i, p)
		i = p
	}
}

func (h *Heap[T]) down(i int) bool {
	start := i
	for {
		l := 2*i + 1
		if l >= len(h.items) {
			break
		}
		c := l
		if r := l + 1; r < len(h.items) && h.items[r].Less(h.items[l]) {
			c = r
		}
		if !h.items[c].Less(h.items[i]) {
			break
		}
		h.swap(i, c)
		i = c
	}
	return i > start
}
