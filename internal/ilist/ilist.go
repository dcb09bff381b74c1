// Package ilist is an intrusive doubly-linked FIFO: the links live in the
// elements (embed Links), so adding and removing allocate nothing, and
// removing an element from the middle is O(1). A List and the Links of its
// elements are not safe for concurrent use: their owner guards them.
package ilist

// Links is embedded in a type whose values go into a List. The zero value
// is an element in no list.
//
// Not safe for concurrent use: the list's owner guards it.
type Links[T any] struct {
	prev, next *T
	in         bool
}

func (l *Links[T]) links() *Links[T] { return l }

// Listed reports whether the element is in a list.
func (l *Links[T]) Listed() bool { return l.in }

// Elem is a pointer to a type that embeds Links.
//
// Not safe for concurrent use: the list's owner guards it.
type Elem[T any] interface {
	*T
	links() *Links[T]
}

// List is a FIFO of elements. The zero value is an empty list.
type List[T any, P Elem[T]] struct {
	head, tail *T
	n          int
}

// Len returns the number of elements.
func (l *List[T, P]) Len() int { return l.n }

// Front returns the first element, or nil.
func (l *List[T, P]) Front() *T { return l.head }

// Back returns the last element, or nil.
func (l *List[T, P]) Back() *T { return l.tail }

// Push adds e, which must be in no list, at the end.
func (l *List[T, P]) Push(e *T) {
	k := P(e).links()
	k.in, k.prev, k.next = true, l.tail, nil
	if l.tail == nil {
		l.head = e
	} else {
		P(l.tail).links().next = e
	}
	l.tail = e
	l.n++
}

// Remove takes e, which must be in l, out of it.
func (l *List[T, P]) Remove(e *T) {
	k := P(e).links()
	if k.prev == nil {
		l.head = k.next
	} else {
		P(k.prev).links().next = k.next
	}
	if k.next == nil {
		l.tail = k.prev
	} else {
		P(k.next).links().prev = k.prev
	}
	k.in, k.prev, k.next = false, nil, nil
	l.n--
}
