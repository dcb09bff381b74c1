package differential

import (
	"fmt"
	"time"
)

// dialStep is what one dial of a Reconnect's connector does: it takes lat,
// then fails or hands over the connection (the downstream below).
type dialStep struct {
	lat  time.Duration
	fail bool
}

func (d dialStep) String() string {
	if d.fail {
		return fmt.Sprintf("%v refused", d.lat)
	}
	return fmt.Sprintf("%v ok", d.lat)
}

// life is how long a Reconnect's k-th connection lasts before it breaks
// (0: it never does).
func (l layer) life(k int) time.Duration {
	if k < len(l.lives) {
		return l.lives[k]
	}
	return 0
}

// dial is a Reconnect's n-th dial (a quick success past the drawn ones).
func (l layer) dial(n int) dialStep {
	if n < len(l.dials) {
		return l.dials[n]
	}
	return dialStep{lat: time.Millisecond}
}

// maxBackoff is the longest wait between dials: the supervisor's backoff
// doubles from the layer's minimum up to it.
const maxBackoff = time.Second

// reconnect: the innermost stage, c slots, over a connection it dials on
// demand. Without a connection its inner service is never ready, so a
// request waits parked in the stage (and those behind it in its mailbox).
// The first request that finds it Idle asks its connection actor for a
// connection (Connecting); the actor dials at once, or, while its
// supervisor's backoff holds it after a failure, once the backoff is over.
// A dial that succeeds makes the connection (the downstream, until it
// breaks) the inner service (Connected) and the parked request goes on to
// it; one that fails answers the parked request with the connection error
// and goes Idle, so the next request asks again; the actor's supervisor
// restarts it after min * 2^(failures in a row - 1), at most maxBackoff.
// A connection that breaks says so when the stage next asks its readiness:
// the stage drops it and goes Idle, the request that asked waits parked
// for the next connection, asked for at once, which the actor dials after
// the backoff of a first failure (a connection made counts as healthy, so
// the failures in a row start over). (The scripts make at most three dials
// fail and two connections break: the supervisor's intensity, ten within a
// minute, that would stop it for good is never reached.)
func (w *world) reconnect(l layer, leaf mleaf) mstage {
	rc := &mrecon{w: w, l: l, leaf: leaf}
	rc.b = w.stage(l.n, mnotConnected{})
	rc.b.take = func(m *msg) {
		if !rc.connected && !rc.asked {
			rc.connect()
		}
		rc.b.forward(m)
	}
	return rc.b
}

type mrecon struct {
	w         *world
	b         *mbox
	l         layer
	leaf      mleaf
	connected bool
	asked     bool          // a connection was asked for and not answered yet
	dials     int           // made so far
	streak    int           // failures in a row
	resumeAt  time.Duration // the end of the backoff after the last failure
	made      int           // connections made so far
	conn      *mconn        // the current one
}

// connect asks the connection actor for a connection: it dials when its
// backoff is over.
func (rc *mrecon) connect() {
	rc.asked = true
	rc.w.at(max(rc.w.now, rc.resumeAt), rc.dial)
}

func (rc *mrecon) dial() {
	n := rc.dials
	rc.dials++
	rc.w.calls = append(rc.w.calls, call{id: -1, n: n, at: rc.w.now, ep: rc.leaf.path + "dial"})
	st := rc.l.dial(n)
	rc.w.after(st.lat, func() {
		if st.fail {
			rc.fail()
			rc.b.post(rc.refused)
			return
		}
		rc.b.post(rc.connect1)
	})
}

// fail is a failure of the connection actor: its supervisor restarts it
// after the backoff.
func (rc *mrecon) fail() {
	rc.streak++
	rc.resumeAt = rc.w.now + min(rc.l.d<<(rc.streak-1), maxBackoff)
}

// refused: the parked request gets the connection error; the state is Idle.
func (rc *mrecon) refused() {
	rc.asked = false
	if rc.b.parked != nil {
		m := rc.b.unpark()
		rc.b.answer(m, fail("connect"))
		rc.b.drainBacklog()
	}
}

// connect1: the connection is the inner service; the parked request goes
// on.
func (rc *mrecon) connect1() {
	rc.asked, rc.connected = false, true
	rc.conn = &mconn{rc: rc, leaf: rc.leaf, at: 1 << 62}
	if life := rc.l.life(rc.made); life > 0 {
		rc.conn.at = rc.w.now + life
	}
	rc.made++
	rc.setInner(rc.conn)
}

// setInner replaces the inner service: the parked request waits for the
// new one.
func (rc *mrecon) setInner(in mstage) {
	rc.b.inner = in
	if rc.b.parked != nil {
		rc.b.park(rc.b.unpark())
	}
}

// broken: connection c said it broke. It is dropped; the actor fails, its
// streak started over (the connection was healthy); a parked request asks
// for the next connection.
func (rc *mrecon) broken(c *mconn) {
	if c != rc.conn || !rc.connected {
		return
	}
	rc.connected, rc.conn = false, nil
	rc.setInner(mnotConnected{})
	rc.streak = 0
	rc.fail()
	if rc.b.parked != nil {
		rc.connect()
	}
}

// mconn is one connection: the downstream, until at; then it is broken,
// which it tells the stage the first time its readiness is asked.
type mconn struct {
	rc   *mrecon
	leaf mleaf
	at   time.Duration
	told bool
}

func (c *mconn) isBroken() bool {
	if c.rc.w.now < c.at {
		return false
	}
	if !c.told {
		c.told = true
		c.rc.b.post(func() { c.rc.broken(c) })
	}
	return true
}

func (c *mconn) tryReserve() bool          { return !c.isBroken() }
func (c *mconn) reserveAsync(*waiter) bool { return !c.isBroken() }
func (c *mconn) cancelWait(*waiter) bool   { return true }
func (c *mconn) unreserve()                {}
func (c *mconn) send(r *mreq, k kont)      { c.leaf.send(r, k) }

// mnotConnected is Reconnect's inner service while it has no connection:
// never ready.
type mnotConnected struct{}

func (mnotConnected) tryReserve() bool          { return false }
func (mnotConnected) reserveAsync(*waiter) bool { return false }
func (mnotConnected) cancelWait(*waiter) bool   { return true }
func (mnotConnected) unreserve()                {}
func (mnotConnected) send(*mreq, kont)          { panic("a request sent without a connection") }
