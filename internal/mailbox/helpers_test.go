package mailbox_test

import (
	"sync"

	"github.com/troupe-go/troupe/internal/mailbox"
)

// stopMsg asks the fake actor to stop its mailbox.
type stopMsg struct{}

// fakeActor is a MessageInvoker standing in for a stage actor: it keeps the
// user messages it receives ("held", each with its slot) until the test frees
// them, and records the rest.
type fakeActor struct {
	mb *mailbox.Mailbox

	mu      sync.Mutex
	held    []any // user messages received, slot not yet freed
	control []any
	system  []any
	stopped bool
	free    bool // free a slot as soon as a user message arrives
}

func newFake(size int, free bool, opts ...mailbox.Option) *fakeActor {
	a := &fakeActor{free: free}
	opts = append(opts, mailbox.OnDropped(func(msg any, _ error) {
		if _, ok := msg.(int); ok {
			a.mb.Free() // a dropped user message's slot
		}
	}))
	mb, err := mailbox.New(size, opts...)
	if err != nil {
		panic(err)
	}
	a.mb = mb
	mb.RegisterHandlers(a, nil)
	return a
}

func (a *fakeActor) InvokeSystemMessage(msg any) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.system = append(a.system, msg)
}

func (a *fakeActor) InvokeUserMessage(msg any) {
	switch msg.(type) {
	case stopMsg:
		a.mu.Lock()
		a.stopped = true
		a.mu.Unlock()
		a.mb.Stop()
	case int:
		if a.free {
			a.mb.Free()
			return
		}
		a.mu.Lock()
		a.held = append(a.held, msg)
		a.mu.Unlock()
	default:
		a.mu.Lock()
		a.control = append(a.control, msg)
		a.mu.Unlock()
	}
}

func (a *fakeActor) EscalateFailure(any, any) {}

// freeHeld frees the slots of the user messages the fake actor holds.
func (a *fakeActor) freeHeld(n int) int {
	a.mu.Lock()
	n = min(n, len(a.held))
	a.held = a.held[n:]
	a.mu.Unlock()
	for range n {
		a.mb.Free()
	}
	return n
}

func (a *fakeActor) heldCount() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.held)
}

// freeHeldAccounted frees held messages and takes them off the test's count.
func (a *fakeActor) freeHeldAccounted(taken interface{ Add(int32) int32 }, n int) {
	a.mu.Lock()
	n = min(n, len(a.held))
	a.held = a.held[n:]
	a.mu.Unlock()
	for range n {
		taken.Add(-1)
		a.mb.Free()
	}
}

func (a *fakeActor) isStopped() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.stopped
}
