package mailbox_test

import (
	"context"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe/internal/mailbox"
)

// A slot freed while callers wait in line belongs to the first of them: a
// newcomer's TryReserve or ReserveAsync never takes it. Admission reopens
// with two free slots and two callers in line; while the first is handed its
// slot (its callback runs before the second is served), a newcomer tries to
// take the second's.
func TestNewcomerNeverTakesASlotOwedToTheLine(t *testing.T) {
	newcomers := map[string]func(*mailbox.Mailbox) bool{
		"TryReserve": func(mb *mailbox.Mailbox) bool {
			ok, _ := mb.TryReserve()
			return ok
		},
		"ReserveAsync": func(mb *mailbox.Mailbox) bool {
			late := mailbox.NewWaiter(func(error) {})
			granted, _ := mb.ReserveAsync(late)
			if !granted {
				mb.CancelWait(late) // it was put at the back of the line
			}
			return granted
		},
	}
	for name, newcomer := range newcomers {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				mb := newFake(2, false).mb
				mb.SetAdmission(false) // both slots free, yet callers line up
				jumped := false
				first := mailbox.NewWaiter(func(err error) {
					if err == nil {
						jumped = newcomer(mb) // the second caller is still in line
					}
				})
				granted, err := mb.ReserveAsync(first)
				require.NoError(t, err)
				require.False(t, granted)
				second := make(chan error, 1)
				go func() { second <- mb.Reserve(context.Background()) }()
				synctest.Wait()
				require.Equal(t, 2, mb.Stats().Waiting)

				mb.SetAdmission(true)
				synctest.Wait()
				assert.False(t, jumped, "the newcomer took a slot while a caller waited in line")
				if jumped {
					mb.Free() // let the second caller finish
				}
				select {
				case err := <-second:
					require.NoError(t, err)
				default:
					t.Error("the caller in line did not get the freed slot")
					require.NoError(t, <-second)
				}
				mb.Free()
				mb.Free()
				assert.Equal(t, 0, mb.Stats().Used)
				mb.PostControl(stopMsg{})
				synctest.Wait()
			})
		})
	}
}
