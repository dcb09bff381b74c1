package mailbox

import "testing"

// spec: HR4 — at MaxCapacity the slot count reaches the capacity exactly
// and goes no further.
func TestHR4_MaxCapacityFillsExactly(t *testing.T) {
	m, err := New(MaxCapacity)
	if err != nil {
		t.Fatal(err)
	}
	m.cap.used.Store(MaxCapacity - 1)
	if ok, _ := m.TryReserve(); !ok {
		t.Fatal("the last slot could not be reserved")
	}
	if ok, _ := m.TryReserve(); ok {
		t.Fatal("a slot beyond MaxCapacity was reserved")
	}
	if got := m.Stats().Used; got != MaxCapacity {
		t.Fatalf("used %d, want %d", got, MaxCapacity)
	}
	m.Free()
	if ok, _ := m.TryReserve(); !ok {
		t.Fatal("a freed slot could not be reserved again")
	}
}
