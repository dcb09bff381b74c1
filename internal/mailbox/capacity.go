package mailbox

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/troupe-go/troupe/internal/ilist"
)

// Waiter waits in a mailbox's line for a slot. The zero value is ready to
// use; a Waiter is in at most one line at a time. Its fields are guarded by
// the mailbox's lock while it is in line.
//
// Safe for concurrent use: its callback runs once, on the goroutine that decided it.
type Waiter struct {
	ilist.Links[Waiter]
	// fn receives the outcome of an asynchronous wait: nil when a slot was
	// reserved for the waiter, the close error when the mailbox closed.
	fn func(error)
	// ch receives the outcome of a blocking wait.
	ch chan error
}

// NewWaiter returns a Waiter for ReserveAsync whose outcome is passed to fn.
// fn runs on whichever goroutine frees the slot or closes the mailbox; it
// must not block (post a message instead).
func NewWaiter(fn func(error)) *Waiter { return &Waiter{fn: fn} }

// Notify delivers an outcome to w: for services other than a Mailbox that
// keep their own line of waiters.
func (w *Waiter) Notify(err error) { w.deliver(err) }

func (w *Waiter) deliver(err error) {
	if w.fn != nil {
		w.fn(err)
		return
	}
	w.ch <- err
}

// capacity counts a mailbox's user slots and lines up those waiting for one.
type capacity struct {
	size    atomic.Int32 // user slots; changed by SetCapacity
	used    atomic.Int32 // reserved + queued + held by the actor
	nwait   atomic.Int32 // len(waiters); read without mu on fast paths
	closed  atomic.Bool  // set once, under mu
	blocked atomic.Bool  // admission paused by the actor (SetAdmission)

	mu       sync.Mutex
	waiters  ilist.List[Waiter] // guarded by mu
	closeErr error              // guarded by mu; set with closed
	wait     *maxWait           // nil: no maximum wait; set by New
	pool     sync.Pool
}

// take reserves one slot if one is free and admission is open.
func (c *capacity) take() bool { return c.takeWithin(c.size.Load()) }

// takeWithin reserves one slot if fewer than limit are used and admission
// is open.
func (c *capacity) takeWithin(limit int32) bool {
	for {
		u := c.used.Load()
		if u >= limit || c.blocked.Load() || c.closed.Load() {
			return false
		}
		if c.used.CompareAndSwap(u, u+1) {
			return true
		}
	}
}

// TryReserve reserves one slot without waiting. It reports false when the
// mailbox is full, its admission is paused, or others are already waiting
// (the line is first come, first served). The error is the close error once
// the mailbox is closed.
func (m *Mailbox) TryReserve() (bool, error) {
	c := &m.cap
	if c.closed.Load() {
		return false, m.closeError()
	}
	if c.nwait.Load() > 0 {
		return false, nil
	}
	return c.take(), nil
}

// TryReserveWithin is TryReserve counting only the first n slots: it
// reserves one only while fewer than n are used, keeping the others for
// callers that may use them all (a load shedder keeps slots for its higher
// priorities this way). An n above the capacity counts as the capacity.
func (m *Mailbox) TryReserveWithin(n int) (bool, error) {
	c := &m.cap
	if c.closed.Load() {
		return false, m.closeError()
	}
	if c.nwait.Load() > 0 {
		return false, nil
	}
	return c.takeWithin(int32(min(n, int(c.size.Load())))), nil
}

// Reserve waits for one slot. When ctx is done first it returns ctx's error
// and holds nothing; once the mailbox is closed it returns the close error.
func (m *Mailbox) Reserve(ctx context.Context) error {
	if ok, err := m.TryReserve(); ok || err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	w, _ := m.cap.pool.Get().(*Waiter)
	if w == nil {
		w = &Waiter{ch: make(chan error, 1)}
	}
	granted, err := m.enqueue(w, true)
	if granted || err != nil {
		m.cap.pool.Put(w)
		return err
	}
	select {
	case err = <-w.ch:
	case <-ctx.Done():
		if m.CancelWait(w) {
			m.cap.pool.Put(w)
			return ctx.Err()
		}
		// The outcome was decided as ctx ended; take it and hold nothing.
		if err = <-w.ch; err == nil {
			m.Free()
		}
		err = ctx.Err()
	}
	m.cap.pool.Put(w)
	return err
}

// ReserveAsync reserves a slot for w: at once when one is free (granted is
// true, and w's callback is not called), or later, when w's callback receives
// nil. The error is the close error once the mailbox is closed.
func (m *Mailbox) ReserveAsync(w *Waiter) (granted bool, err error) {
	if ok, err := m.TryReserve(); ok || err != nil {
		return ok, err
	}
	return m.enqueue(w, false)
}

// ReserveAsyncBounded is ReserveAsync for a waiter that waits on behalf of
// one caller (a request in line for its first slot, or parked by the stage
// outside): MaxWait bounds its wait. Waits on behalf of many (a retry's
// line of sessions) use ReserveAsync, which the maximum wait leaves alone.
func (m *Mailbox) ReserveAsyncBounded(w *Waiter) (granted bool, err error) {
	if ok, err := m.TryReserve(); ok || err != nil {
		return ok, err
	}
	return m.enqueue(w, true)
}

// enqueue puts w in line, unless a slot can be taken right away; bounded:
// MaxWait applies.
func (m *Mailbox) enqueue(w *Waiter, bounded bool) (granted bool, err error) {
	c := &m.cap
	c.mu.Lock()
	if c.closed.Load() {
		err = c.closeErr
		c.mu.Unlock()
		return false, err
	}
	if w.Listed() {
		c.mu.Unlock()
		return false, errWaiterBusy
	}
	// Join the line before looking at the count: a Free that decrements after
	// this sees nwait > 0 and grants under mu (NOTE: pairs with Free).
	c.nwait.Add(1)
	c.waiters.Push(w, &w.Links)
	if c.waiters.Front() == w && c.take() {
		c.waiters.Remove(&w.Links)
		c.nwait.Add(-1)
		c.mu.Unlock()
		return true, nil
	}
	if bounded && c.wait != nil {
		c.armLocked(w)
	}
	c.mu.Unlock()
	return false, nil
}

// CancelWait takes w out of line. It reports false when w was not in line:
// its outcome was already decided and is being, or has been, delivered.
func (m *Mailbox) CancelWait(w *Waiter) bool {
	c := &m.cap
	c.mu.Lock()
	defer c.mu.Unlock()
	if !w.Listed() {
		return false
	}
	c.waiters.Remove(&w.Links)
	c.nwait.Add(-1)
	c.disarmLocked(w)
	return true
}

// Free gives one slot back and, when others wait, grants it to the first in
// line. Every slot taken by a reservation is freed exactly once: by the
// stage when it hands the message on or answers it, by Release of an unused
// permit, or by a Post that failed.
func (m *Mailbox) Free() {
	m.cap.used.Add(-1)
	if m.cap.nwait.Load() > 0 { // NOTE: pairs with enqueue
		m.grant()
	}
}

// grant hands free slots to waiters, first in line first.
func (m *Mailbox) grant() {
	c := &m.cap
	for {
		c.mu.Lock()
		w := c.waiters.Front()
		if w == nil || !c.take() {
			c.mu.Unlock()
			return
		}
		c.waiters.Remove(&w.Links)
		c.nwait.Add(-1)
		c.disarmLocked(w)
		c.mu.Unlock()
		w.deliver(nil)
	}
}

// SetCapacity changes the number of user slots to n, from 1 to
// MaxCapacity (the caller checks it). Raising it grants the new slots to
// those waiting, first in line first; lowering it takes no slot back: those
// reserved, queued or held stay valid, and reservations wait until fewer
// than n are used.
func (m *Mailbox) SetCapacity(n int) {
	m.cap.size.Store(int32(n))
	if m.cap.nwait.Load() > 0 {
		m.grant()
	}
}

// SetAdmission opens or pauses admission: while paused, reservations wait
// even when slots are free (a rate limiter uses this while Limited). Slots
// already reserved stay valid.
func (m *Mailbox) SetAdmission(open bool) {
	m.cap.blocked.Store(!open)
	if open && m.cap.nwait.Load() > 0 {
		m.grant()
	}
}

// Close stops admission for good: waiters and every later reservation get
// err. Slots already reserved stay counted until freed. Close is idempotent;
// the first err wins.
func (m *Mailbox) Close(err error) {
	c := &m.cap
	c.mu.Lock()
	if c.closed.Load() {
		c.mu.Unlock()
		return
	}
	c.closeErr = err
	c.closed.Store(true)
	var ws []*Waiter
	for w := c.waiters.Front(); w != nil; w = c.waiters.Front() {
		c.waiters.Remove(&w.Links)
		c.disarmLocked(w)
		ws = append(ws, w)
	}
	c.nwait.Store(0)
	c.mu.Unlock()
	for _, w := range ws {
		w.deliver(err)
	}
}

// Closed reports whether Close was called.
func (m *Mailbox) Closed() bool { return m.cap.closed.Load() }

// CloseErr returns the error Close was given, or nil before Close.
func (m *Mailbox) CloseErr() error { return m.closeError() }

func (m *Mailbox) closeError() error {
	m.cap.mu.Lock()
	defer m.cap.mu.Unlock()
	return m.cap.closeErr
}
