package reconnect_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/stages/reconnect"
	"github.com/troupe-go/troupe/troupetest"
)

// Regression: a connection actor whose dial failed, in a host that restarts
// at once (the system's root host), and that was closed right after, could
// stop before its supervisor handled the failure; the supervisor's Restart,
// sent through the actor's PID, was then a dead letter (about one close in
// 200 here; troupetest.NewSystem fails the test on one). The supervisor now
// posts into the actor's own mailbox, which drops it once stopped.
//
// spec: HR2, ACT5, SUP1
func TestHR2_ClosingRightAfterAFailedDialLeavesNoDeadLetter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sys := troupetest.NewSystem(t)
		refuse := func(context.Context, string) (troupe.Service[int, int], error) { return nil, errors.New("refused") }
		for range 2000 {
			rc, err := reconnect.New(sys, reconnect.Dialer(refuse), "peer")
			require.NoError(t, err)
			_, err = troupe.Do(context.Background(), rc, 1)
			require.ErrorIs(t, err, reconnect.ErrConnect)
			require.NoError(t, rc.Close(context.Background()))
		}
	})
}
