// Package ilist is an intrusive doubly-linked list: the links live in the
// elements (a Links field per list an element can be in at once), so adding
// and removing allocate nothing, and removing an element from the middle is
// O(1). The operations of a FIFO (Push, PushFront, Front, Remove) are a
// few pointer moves each, small enough for the compiler to inline, as a
// list written out by hand would be.
//
// Each operation that adds an element takes the element and its Links for
// that list (l.Push(e, &e.live)); the others take the Links alone. A List
// and the Links of its elements are not safe for concurrent use: their
// owner guards them.
package ilist

// Links is an element's place in one List: a field of the element's type,
// one for each list it can be in at once (embedded when there is one). The
// zero value is an element in no list.
//
// Not safe for concurrent use: the list's owner guards it.
type Links[T any] struct {
	prev, next *Links[T]
	elem       *T // the element, while it is in a list
}

// Listed reports whether the element is in a list.
func (k *Links[T]) Listed() bool { return k.elem != nil }

// List is a sequence of elements, each in it through its Links for it. The
// zero value is an empty list. It is two words: the last element is found
// through the first one's prev.
//
// Not safe for concurrent use: its owner guards it.
type List[T any] struct {
	head *Links[T] // the first element's; head.prev is the last's
	n    int
}

// Len returns the number of elements.
func (l *List[T]) Len() int { return l.n }

// Front returns the first element, or nil.
func (l *List[T]) Front() *T {
	if l.head == nil {
		return nil
	}
	return l.head.elem
}

// Back returns the last element, or nil.
func (l *List[T]) Back() *T {
	if l.head == nil {
		return nil
	}
	return l.head.prev.elem
}

// Next returns the element after the one k, which must be in l, links;
// nil when it is the last.
func (l *List[T]) Next(k *Links[T]) *T {
	if k.next == nil {
		return nil
	}
	return k.next.elem
}

// Prev returns the element before the one k, which must be in l, links;
// nil when it is the first.
func (l *List[T]) Prev(k *Links[T]) *T {
	if k == l.head {
		return nil
	}
	return k.prev.elem
}

// Push adds e, whose Links for l are k (in no list), at the end.
func (l *List[T]) Push(e *T, k *Links[T]) {
	k.elem, k.next = e, nil
	if l.head == nil {
		k.prev, l.head = k, k
	} else {
		last := l.head.prev
		k.prev, last.next, l.head.prev = last, k, k
	}
	l.n++
}

// PushFront adds e, whose Links for l are k (in no list), first.
func (l *List[T]) PushFront(e *T, k *Links[T]) {
	k.elem, k.next = e, l.head
	if l.head == nil {
		k.prev = k
	} else {
		k.prev, l.head.prev = l.head.prev, k
	}
	l.head = k
	l.n++
}

// InsertAfter adds e, whose Links for l are k (in no list), right after the
// element whose Links at are (in l), or first when at is nil.
func (l *List[T]) InsertAfter(e *T, k, at *Links[T]) {
	if at == nil {
		l.PushFront(e, k)
		return
	}
	k.elem, k.prev, k.next = e, at, at.next
	if at.next == nil {
		l.head.prev = k
	} else {
		at.next.prev = k
	}
	at.next = k
	l.n++
}

// Remove takes the element whose Links are k, which must be in l, out of
// it.
func (l *List[T]) Remove(k *Links[T]) {
	switch {
	case k == l.head:
		if l.head = k.next; l.head != nil {
			l.head.prev = k.prev // the last
		}
	case k.next == nil:
		k.prev.next, l.head.prev = nil, k.prev
	default:
		k.prev.next, k.next.prev = k.next, k.prev
	}
	k.elem, k.prev, k.next = nil, nil, nil
	l.n--
}

// Take returns a list of l's elements, in their order, and leaves l empty:
// they move, with their Links, to the list returned.
func (l *List[T]) Take() List[T] {
	taken := *l
	*l = List[T]{}
	return taken
}
