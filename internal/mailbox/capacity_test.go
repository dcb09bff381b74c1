package mailbox_test

import (
	"errors"
	"math"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe/internal/mailbox"
	"github.com/troupe-go/troupe/troupetest"
)

// spec: HR4 — a capacity the mailbox cannot hold exactly is an error, never
// truncated (1<<32+5 used to become 5, and 1<<31 a mailbox never ready).
func TestHR4_NewRejectsCapacitiesItCannotHold(t *testing.T) {
	for _, size := range []int64{0, -1, math.MinInt64, 1 << 31, 1<<32 + 5, mailbox.MaxCapacity + 1, math.MaxInt64} {
		if int64(int(size)) != size {
			continue // not an int on this platform
		}
		mb, err := mailbox.New(int(size))
		troupetest.BadOption(t, err, "mailbox", "Capacity")
		if mb != nil {
			t.Errorf("capacity %d: got a mailbox of capacity %d", size, mb.Stats().Capacity)
		}
	}
}

// spec: HR4
func TestHR4_MaxCapacityIsHeldExactly(t *testing.T) {
	mb, err := mailbox.New(mailbox.MaxCapacity)
	require.NoError(t, err)
	assert.Equal(t, mailbox.MaxCapacity, mb.Stats().Capacity)
	ok, err := mb.TryReserve()
	require.NoError(t, err)
	assert.True(t, ok, "a mailbox of MaxCapacity is ready")
	mb.Free()
	assert.Equal(t, 0, mb.Stats().Used)
}

// spec: HR4 — MaxCapacity is safe as "no limit of its own": an idle mailbox
// allocates nothing per unit of capacity.
func TestHR4_AnIdleMailboxCostsTheSameAtAnyCapacity(t *testing.T) {
	small, huge := newCost(t, 1), newCost(t, mailbox.MaxCapacity)
	t.Logf("bytes per idle mailbox: capacity 1: %d, MaxCapacity: %d", small, huge)
	assert.LessOrEqual(t, huge, small+64)
}

// newCost returns the bytes New allocates for a mailbox of size.
func newCost(t *testing.T, size int) int64 {
	const n = 1000
	keep := make([]*mailbox.Mailbox, n)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for i := range keep {
		mb, err := mailbox.New(size)
		if err != nil {
			t.Fatal(err)
		}
		keep[i] = mb
	}
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(keep)
	return int64(after.TotalAlloc-before.TotalAlloc) / n
}

// spec: PS1 — TryReserveWithin counts only the first n slots.
func TestPS1_TryReserveWithinKeepsTheOtherSlots(t *testing.T) {
	mb, err := mailbox.New(4)
	require.NoError(t, err)
	for i := range 2 {
		ok, err := mb.TryReserveWithin(2)
		require.NoError(t, err)
		require.True(t, ok, "slot %d of the first 2", i+1)
	}
	ok, err := mb.TryReserveWithin(2)
	require.NoError(t, err)
	assert.False(t, ok, "the first 2 are used: the others are kept")
	ok, _ = mb.TryReserveWithin(0)
	assert.False(t, ok, "a limit of 0 takes nothing")
	ok, _ = mb.TryReserveWithin(100)
	assert.True(t, ok, "a limit above the capacity is the capacity")
	ok, _ = mb.TryReserve()
	assert.True(t, ok, "the 4th slot")
	ok, _ = mb.TryReserveWithin(100)
	assert.False(t, ok, "full")
	assert.Equal(t, 4, mb.Stats().Used)
	closed := errors.New("closed")
	mb.Close(closed)
	_, err = mb.TryReserveWithin(4)
	assert.ErrorIs(t, err, closed)
}
