package mailbox_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe/internal/mailbox"
)

var errWaited = errors.New("waited too long")

// A bounded wait is refused after the maximum wait, a waiter reused after
// it gets the next wait's outcome only, and an unbounded one waits on.
//
// spec: PP2
func TestMaxWaitRefusesABoundedWaiterOnlyForItsOwnWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mb, err := mailbox.New(1, mailbox.MaxWait(100*time.Millisecond, errWaited))
		require.NoError(t, err)
		require.NoError(t, mb.Reserve(context.Background()))
		assert.ErrorIs(t, mb.Reserve(context.Background()), errWaited)

		got := make(chan error, 4)
		w := mailbox.NewWaiter(func(err error) { got <- err })
		granted, err := mb.ReserveAsyncBounded(w)
		require.NoError(t, err)
		require.False(t, granted)
		time.Sleep(60 * time.Millisecond)
		require.True(t, mb.CancelWait(w))
		granted, err = mb.ReserveAsyncBounded(w) // the same waiter, a new wait
		require.NoError(t, err)
		require.False(t, granted)
		time.Sleep(60 * time.Millisecond) // the first wait's 100 ms passed
		synctest.Wait()
		assert.Empty(t, got, "the first wait's timer refuses nothing")
		time.Sleep(40 * time.Millisecond)
		assert.ErrorIs(t, <-got, errWaited)

		unbounded := mailbox.NewWaiter(func(err error) { got <- err })
		granted, err = mb.ReserveAsync(unbounded)
		require.NoError(t, err)
		require.False(t, granted)
		time.Sleep(time.Second)
		synctest.Wait()
		assert.Empty(t, got, "an unbounded wait is not refused")
		mb.Free()
		assert.NoError(t, <-got, "it gets the slot")
		mb.Free()
	})
}

// Raising the capacity grants those waiting; lowering it takes no slot
// back.
//
// spec: PP2
func TestSetCapacityGrantsWaitersAndKeepsSlotsTaken(t *testing.T) {
	mb, err := mailbox.New(1)
	require.NoError(t, err)
	ok, _ := mb.TryReserve()
	require.True(t, ok)
	got := make(chan error, 2)
	for range 2 {
		granted, err := mb.ReserveAsync(mailbox.NewWaiter(func(err error) { got <- err }))
		require.NoError(t, err)
		require.False(t, granted)
	}
	mb.SetCapacity(3)
	assert.NoError(t, <-got)
	assert.NoError(t, <-got)
	mb.SetCapacity(1)
	assert.Equal(t, mailbox.Stats{Capacity: 1, Used: 3}, mb.Stats())
	mb.Free()
	mb.Free()
	ok, _ = mb.TryReserve()
	assert.False(t, ok, "one still used of one")
	mb.Free()
	ok, _ = mb.TryReserve()
	assert.True(t, ok)
	mb.Free()
}
