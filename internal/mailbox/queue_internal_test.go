package mailbox

import (
	"math/rand/v2"
	"testing"
	"unsafe"
)

// A ring grows from nothing as messages queue up and keeps them in order
// through every growth, shrink and wrap.
func TestRingGrowsOnDemandAndKeepsOrder(t *testing.T) {
	var r ring
	if len(r.buf) != 0 {
		t.Fatal("a new ring holds a buffer")
	}
	rnd := rand.New(rand.NewPCG(5, 6))
	next, want, peak := 0, 0, 0
	for range 10_000 {
		if r.size < 100 && (r.size == 0 || rnd.IntN(3) > 0) {
			r.push(next)
			next++
			peak = max(peak, len(r.buf))
			continue
		}
		if got := r.pop().(int); got != want {
			t.Fatalf("popped %d, want %d", got, want)
		}
		want++
	}
	for r.size > 0 {
		if got := r.pop().(int); got != want {
			t.Fatalf("popped %d, want %d", got, want)
		}
		want++
	}
	if want != next {
		t.Fatalf("%d pushed, %d popped", next, want)
	}
	if peak != 128 {
		t.Fatalf("buffer of %d for at most 100 messages, want 128", peak)
	}
	if len(r.buf) > keepSlots {
		t.Fatalf("an empty ring keeps %d slots, want at most %d", len(r.buf), keepSlots)
	}
}

// A burst of a million messages, then one left in the queue: the ring
// gives the burst's memory back. The same with a million going through one
// at a time behind one that stays (a busy stage's control queue, which
// never empties): the buffer never grows. Either way the mailbox with its
// buffer stays within twice an idle mailbox's bytes.
//
// spec: EG9
func TestAQueueGivesItsMemoryBackAfterABurst(t *testing.T) {
	const n = 1_000_000
	const slot = int(unsafe.Sizeof(any(nil)))
	idle := int(unsafe.Sizeof(Mailbox{}))
	for name, burst := range map[string]bool{"a burst": true, "one at a time": false} {
		var r ring
		r.push(-1) // kept
		peak := 0
		for i := range n {
			r.push(i)
			if !burst {
				r.pop()
			}
			peak = max(peak, len(r.buf))
		}
		for burst && r.size > 1 {
			r.pop()
		}
		if r.size != 1 {
			t.Fatalf("%s: %d messages left, want 1", name, r.size)
		}
		if got := idle + len(r.buf)*slot; got > 2*idle {
			t.Errorf("%s: %d slots (%d bytes with the mailbox) after %d messages, over twice an idle mailbox's %d bytes (peak %d slots)", name, len(r.buf), got, n, idle, peak)
		}
		t.Logf("%s: peak %d slots, %d after", name, peak, len(r.buf))
	}
}
