package mailbox

import (
	"time"
)

// maxWait bounds the time a waiter stays in a mailbox's line (MaxWait).
// Its timers are kept beside the line, not in the Waiter, so that a
// mailbox without a maximum wait pays nothing for it. Guarded by the
// capacity's mu.
type maxWait struct {
	d      time.Duration
	err    error
	timers map[*Waiter]*waitTimer
}

// waitTimer is one wait's timer; its address tells the wait apart from a
// later wait of the same Waiter.
type waitTimer struct{ t *time.Timer }

// MaxWait refuses a reservation that waited d in the line: the waiter is
// taken out of line and gets err (Reserve returns it; an asynchronous
// waiter's callback receives it). 0, the default, waits as long as the
// caller does.
func MaxWait(d time.Duration, err error) Option {
	return func(m *Mailbox) {
		if d > 0 {
			m.cap.wait = &maxWait{d: d, err: err, timers: map[*Waiter]*waitTimer{}}
		}
	}
}

// armLocked starts w's timer as w joins the line (mu held).
func (c *capacity) armLocked(w *Waiter) {
	wt := &waitTimer{}
	wt.t = time.AfterFunc(c.wait.d, func() { c.expire(w, wt) })
	c.wait.timers[w] = wt
}

// disarmLocked stops w's timer as w leaves the line (mu held).
func (c *capacity) disarmLocked(w *Waiter) {
	if c.wait == nil {
		return
	}
	if wt := c.wait.timers[w]; wt != nil {
		wt.t.Stop()
		delete(c.wait.timers, w)
	}
}

// expire refuses w if it still waits on the timer wt (a Waiter is reused:
// a timer that fires as its wait ended belongs to no later wait).
func (c *capacity) expire(w *Waiter, wt *waitTimer) {
	c.mu.Lock()
	if c.wait.timers[w] != wt || !w.Listed() {
		c.mu.Unlock()
		return
	}
	delete(c.wait.timers, w)
	c.waiters.Remove(&w.Links)
	c.nwait.Add(-1)
	c.mu.Unlock()
	w.deliver(c.wait.err)
}
