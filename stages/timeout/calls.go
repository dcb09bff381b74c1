package timeout

// calls is a Timeout stage's calls in flight, in deadline order, as a list of
// their contexts. Every call sent to a stage gets the same timeout, so a call
// sent later never has an earlier deadline (OnSend makes sure of it, under
// the stage's lock, for senders that race): the list is a deadline-ordered
// set whose add, remove and earliest are O(1), and which touches only the
// neighbours of the call it changes. Guarded by the behavior's mu.
type calls struct {
	head, tail *callCtx
	n          int
}

// push adds c at the end and reports whether it is the only call.
func (l *calls) push(c *callCtx) bool {
	c.in, c.prev, c.next = true, l.tail, nil
	if l.tail == nil {
		l.head = c
	} else {
		l.tail.next = c
	}
	l.tail = c
	l.n++
	return l.n == 1
}

// remove takes c, which is in the list, out of it.
func (l *calls) remove(c *callCtx) {
	if c.prev == nil {
		l.head = c.next
	} else {
		c.prev.next = c.next
	}
	if c.next == nil {
		l.tail = c.prev
	} else {
		c.next.prev = c.prev
	}
	c.in, c.prev, c.next = false, nil, nil
	l.n--
}
