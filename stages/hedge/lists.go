package hedge

import "time"

// pendingList holds the sessions whose next hedge is due, by due time
// (ties in the order they came). It is intrusive: the links live in the
// sessions, so adding and removing allocate nothing, and a session that
// ends leaves it at once, in O(1), wherever it is. Only the actor adds
// (as it sends an attempt) and takes the due ones (tick); the goroutine
// that ends a session removes it.
//
// A fixed delay makes due times come in order, so an insert is an append
// at the tail; a percentile delay changes slowly, so an insert lands near
// an end. The walk that finds its place goes from both ends at once: it
// costs the distance from the nearer end, at most half the sessions
// listed: requests in flight whose next hedge is still due.
//
// Not safe for concurrent use: the behavior guards it with its mu.
type pendingList[Req, Res any] struct {
	head, tail *session[Req, Res]
	n          int
}

// insert adds ss, which must be in no list, with its next hedge due at
// due, and reports whether it is now the first (the alarm must be set for
// it).
func (l *pendingList[Req, Res]) insert(ss *session[Req, Res], due time.Time) (first bool) {
	ss.due, ss.listed = due, true
	after := l.place(due)
	ss.pprev = after
	if after == nil {
		ss.pnext, l.head = l.head, ss
	} else {
		ss.pnext, after.pnext = after.pnext, ss
	}
	if ss.pnext == nil {
		l.tail = ss
	} else {
		ss.pnext.pprev = ss
	}
	l.n++
	return after == nil
}

// place returns the last session due at or before due, nil if none: it
// walks from the tail backwards and from the head forwards, a step each in
// turn. Every session after b is due later than due; every one before f is
// not: the first end to settle the question does.
func (l *pendingList[Req, Res]) place(due time.Time) *session[Req, Res] {
	b, f := l.tail, l.head
	for b != nil {
		if !due.Before(b.due) {
			return b
		}
		if due.Before(f.due) {
			return f.pprev
		}
		b, f = b.pprev, f.pnext
	}
	return nil
}

// remove takes ss, which must be in l, out of it.
func (l *pendingList[Req, Res]) remove(ss *session[Req, Res]) {
	if ss.pprev == nil {
		l.head = ss.pnext
	} else {
		ss.pprev.pnext = ss.pnext
	}
	if ss.pnext == nil {
		l.tail = ss.pprev
	} else {
		ss.pnext.pprev = ss.pprev
	}
	ss.pprev, ss.pnext, ss.listed = nil, nil, false
	l.n--
}

// popDue takes the first session out of l if it is due at now (its due
// time is not after now), and returns it; nil when none is due.
func (l *pendingList[Req, Res]) popDue(now time.Time) *session[Req, Res] {
	ss := l.head
	if ss == nil || ss.due.After(now) {
		return nil
	}
	l.remove(ss)
	return ss
}

// sessionList is an intrusive list of sessions: those in flight.
//
// Not safe for concurrent use: the behavior guards it with its mu.
type sessionList[Req, Res any] struct {
	head *session[Req, Res]
	n    int
}

func (l *sessionList[Req, Res]) push(ss *session[Req, Res]) {
	ss.prev, ss.next = nil, l.head
	if l.head != nil {
		l.head.prev = ss
	}
	l.head = ss
	l.n++
}

func (l *sessionList[Req, Res]) remove(ss *session[Req, Res]) {
	if ss.prev != nil {
		ss.prev.next = ss.next
	} else {
		l.head = ss.next
	}
	if ss.next != nil {
		ss.next.prev = ss.prev
	}
	ss.prev, ss.next = nil, nil
	l.n--
}
