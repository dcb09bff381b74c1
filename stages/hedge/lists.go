package hedge

import (
	"time"

	"github.com/troupe-go/troupe/internal/ilist"
)

// pendingList holds the sessions whose next hedge is due, by due time
// (ties in the order they came), each through its pend links. A session
// that ends leaves it at once, in O(1), wherever it is. Only the actor
// adds (as it sends an attempt) and takes the due ones (tick); the
// goroutine that ends a session removes it.
//
// A fixed delay makes due times come in order, so an insert is an append
// at the tail; a percentile delay changes slowly, so an insert lands near
// an end. The walk that finds its place goes from both ends at once: it
// costs the distance from the nearer end, at most half the sessions
// listed: requests in flight whose next hedge is still due.
//
// Not safe for concurrent use: the behavior guards it with its mu.
type pendingList[Req, Res any] struct {
	list ilist.List[session[Req, Res]]
}

// first returns the session due first, nil when none is listed.
func (l *pendingList[Req, Res]) first() *session[Req, Res] { return l.list.Front() }

// len returns the number of sessions listed.
func (l *pendingList[Req, Res]) len() int { return l.list.Len() }

// insert adds ss, which must be in no list, with its next hedge due at
// due, and reports whether it is now the first (the alarm must be set for
// it).
func (l *pendingList[Req, Res]) insert(ss *session[Req, Res], due time.Time) (first bool) {
	ss.due = due
	after := l.place(due)
	if after == nil {
		l.list.PushFront(ss, &ss.pend)
		return true
	}
	l.list.InsertAfter(ss, &ss.pend, &after.pend)
	return false
}

// place returns the last session due at or before due, nil if none: it
// walks from the tail backwards and from the head forwards, a step each in
// turn. Every session after b is due later than due; every one before f is
// not: the first end to settle the question does.
func (l *pendingList[Req, Res]) place(due time.Time) *session[Req, Res] {
	b, f := l.list.Back(), l.list.Front()
	for b != nil {
		if !due.Before(b.due) {
			return b
		}
		if due.Before(f.due) {
			return l.list.Prev(&f.pend)
		}
		b, f = l.list.Prev(&b.pend), l.list.Next(&f.pend)
	}
	return nil
}

// remove takes ss, which must be in l, out of it.
func (l *pendingList[Req, Res]) remove(ss *session[Req, Res]) { l.list.Remove(&ss.pend) }

// popDue takes the first session out of l if it is due at now (its due
// time is not after now), and returns it; nil when none is due.
func (l *pendingList[Req, Res]) popDue(now time.Time) *session[Req, Res] {
	ss := l.list.Front()
	if ss == nil || ss.due.After(now) {
		return nil
	}
	l.remove(ss)
	return ss
}
