package mailbox

import (
	"math/rand/v2"
	"testing"
)

// The user ring grows from nothing as messages queue up and keeps them in
// order through every growth and wrap.
func TestRingGrowsOnDemandAndKeepsOrder(t *testing.T) {
	var r ring
	if len(r.buf) != 0 {
		t.Fatal("a new ring holds a buffer")
	}
	rnd := rand.New(rand.NewPCG(5, 6))
	next, want := 0, 0
	for range 10_000 {
		if r.size < 100 && (r.size == 0 || rnd.IntN(3) > 0) {
			r.push(next)
			next++
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
	if len(r.buf) != 128 {
		t.Fatalf("buffer of %d for at most 100 messages, want 128", len(r.buf))
	}
}
