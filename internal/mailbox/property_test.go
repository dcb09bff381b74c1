package mailbox_test

import (
	"context"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe/internal/mailbox"
)

// model runs a program of mailbox operations inside a synctest bubble and
// checks, after every step, that the mailbox's count of used slots is
// exactly what the program accounts for (reserved by the test + queued +
// held by the actor) and never above capacity; at the end, after a stop,
// that no slot leaked.
type model struct {
	t        *testing.T
	a        *fakeActor
	size     int
	reserved int // slots the test holds, not yet posted or freed
	waiters  []*mailbox.Waiter
	granted  chan struct{} // async grants, counted into reserved when seen
	blocked  []context.CancelFunc
	blockedN atomic.Int32 // blocking reservations that got a slot
	stopped  bool
	next     int
}

func (m *model) step(op byte) {
	mb := m.a.mb
	switch op % 12 {
	case 0: // TryReserve
		if ok, _ := mb.TryReserve(); ok {
			m.reserved++
		}
	case 1: // Reserve in the background; it may wait
		ctx, cancel := context.WithCancel(context.Background())
		m.blocked = append(m.blocked, cancel)
		go func() {
			if mb.Reserve(ctx) == nil {
				m.blockedN.Add(1)
			}
		}()
	case 2: // give up the oldest background reservation
		if len(m.blocked) > 0 {
			m.blocked[0]()
			m.blocked = m.blocked[1:]
		}
	case 3: // ReserveAsync
		w := mailbox.NewWaiter(func(err error) {
			if err == nil {
				m.granted <- struct{}{}
			}
		})
		granted, err := mb.ReserveAsync(w)
		if granted {
			m.reserved++
		} else if err == nil {
			m.waiters = append(m.waiters, w)
		}
	case 4: // cancel the oldest async wait
		if len(m.waiters) > 0 {
			mb.CancelWait(m.waiters[0])
			m.waiters = m.waiters[1:]
		}
	case 5, 6: // post with a reserved slot
		if m.reserved > 0 {
			m.reserved--
			m.next++
			_ = mb.Post(m.next) // refused after stop: the slot is freed by Post
		}
	case 7: // release a reserved slot unused
		if m.reserved > 0 {
			m.reserved--
			mb.Free()
		}
	case 8: // the actor answers a held message
		m.a.freeHeld(1)
	case 9: // the actor pauses or resumes admission
		mb.SetAdmission(m.next%2 == 0)
		m.next++
	case 10: // stop
		if !m.stopped {
			m.stopped = true
			mb.PostControl(stopMsg{})
		}
	case 11: // close admission for good
		mb.Close(mailbox.ErrStopped)
	}
	synctest.Wait()
	m.collect()
	m.check()
}

// collect counts grants that arrived into the test's reservations.
func (m *model) collect() {
	for {
		select {
		case <-m.granted:
			m.reserved++
		default:
			m.reserved += int(m.blockedN.Swap(0))
			return
		}
	}
}

func (m *model) check() {
	s := m.a.mb.Stats()
	want := m.reserved + s.Queued + m.a.heldCount()
	require.Equal(m.t, want, s.Used, "used slots: reserved %d + queued %d + held %d", m.reserved, s.Queued, m.a.heldCount())
	require.LessOrEqual(m.t, s.Used, m.size, "capacity exceeded")
}

// finish releases everything and checks that no slot leaked.
func (m *model) finish() {
	mb := m.a.mb
	for _, c := range m.blocked {
		c()
	}
	for _, w := range m.waiters {
		mb.CancelWait(w)
	}
	mb.SetAdmission(true)
	synctest.Wait()
	m.collect()
	for ; m.reserved > 0; m.reserved-- {
		mb.Free()
	}
	m.a.freeHeld(m.size)
	if !m.stopped {
		mb.PostControl(stopMsg{})
	}
	synctest.Wait()
	m.a.freeHeld(m.size)
	require.Equal(m.t, 0, mb.Stats().Used, "a slot leaked")
}

func runProgram(t *testing.T, size int, prog []byte) {
	synctest.Test(t, func(t *testing.T) {
		m := &model{t: t, a: newFake(size, false), size: size, granted: make(chan struct{}, 1024)}
		for _, op := range prog {
			m.step(op)
		}
		m.finish()
	})
}

// spec: ACT2
func FuzzACT2_CapacityNeverExceededNorLeaked(f *testing.F) {
	f.Add(uint8(1), []byte{0, 5, 8, 1, 0, 7, 10})
	f.Add(uint8(2), []byte{0, 0, 1, 3, 5, 8, 2, 4, 7, 9, 0, 9, 5, 8, 11})
	f.Add(uint8(3), []byte{1, 1, 1, 1, 0, 5, 5, 10, 5, 8, 8})
	f.Fuzz(func(t *testing.T, size uint8, prog []byte) {
		if len(prog) > 200 {
			prog = prog[:200]
		}
		runProgram(t, int(size%8)+1, prog)
	})
}

// spec: ACT2
func TestACT2_RandomProgramsKeepCapacity(t *testing.T) {
	r := rand.New(rand.NewPCG(testSeed(t), 2))
	var size int
	var prog []byte
	defer func() {
		if t.Failed() {
			t.Logf("failing program (a seed for the fuzz test): size %d, %v", size, prog)
		}
	}()
	for range 300 {
		prog = make([]byte, 60)
		for i := range prog {
			prog[i] = byte(r.IntN(256))
		}
		size = r.IntN(6) + 1
		runProgram(t, size, prog)
	}
}

// spec: ACT2
// The seed fixes every random choice (the operations and when the actor
// stops); the interleaving is up to the scheduler.
func TestACT2_ConcurrentStressKeepsCapacity(t *testing.T) {
	t.Run("goroutine", func(t *testing.T) { stress(t, testSeed(t)) })
	t.Run("inline", func(t *testing.T) { stress(t, testSeed(t), mailbox.Inline(4)) })
}

func stress(t *testing.T, seed uint64, opts ...mailbox.Option) {
	const size, workers, rounds = 4, 16, 400
	a := newFake(size, false, opts...)
	mb := a.mb
	var taken atomic.Int32 // slots this test believes are taken
	over := atomic.Bool{}
	grab := func() {
		if taken.Add(1) > size {
			over.Store(true)
		}
	}
	var wg sync.WaitGroup
	// The actor's downstream: it keeps answering what the actor holds.
	quit := make(chan struct{})
	answered := make(chan struct{})
	go func() {
		defer close(answered)
		for {
			select {
			case <-quit:
				return
			default:
				a.freeHeldAccounted(&taken, 1)
				runtime.Gosched()
			}
		}
	}()
	stopAt := rand.New(rand.NewPCG(seed, 0)).IntN(workers * rounds)
	var ops atomic.Int32
	for w := range workers {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(seed, uint64(w)+1))
			for range rounds {
				if ops.Add(1) == int32(stopAt) {
					mb.PostControl(stopMsg{})
				}
				var ok bool
				switch r.IntN(3) {
				case 0:
					ok, _ = mb.TryReserve()
				case 1:
					ctx, cancel := context.WithCancel(context.Background())
					if r.IntN(4) == 0 {
						cancel()
					}
					ok = mb.Reserve(ctx) == nil
					cancel()
				case 2:
					a.freeHeldAccounted(&taken, 1)
					continue
				}
				if !ok {
					continue
				}
				grab()
				if r.IntN(2) == 0 {
					taken.Add(-1)
					mb.Free()
				} else if mb.Post(w) != nil {
					taken.Add(-1) // refused after stop; Post freed the slot
				}
			}
		})
	}
	wg.Wait()
	close(quit)
	<-answered
	if !a.isStopped() {
		mb.PostControl(stopMsg{})
	}
	for !a.isStopped() || mb.Stats().Used > a.heldCount() {
		a.freeHeldAccounted(&taken, size)
	}
	a.freeHeldAccounted(&taken, size)
	require.False(t, over.Load(), "more slots taken than the capacity")
	require.Equal(t, 0, mb.Stats().Used, "a slot leaked")
}
