package stagekit

import (
	"fmt"
	"testing"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// protoactor's children set shortens its slice by one on each removal
// without clearing the slot it leaves; clearing that one slot after every
// removal keeps every slot past the end clear, so no closed child's PID
// stays reachable.
func TestDropStalePIDsKeepsEverySlotPastTheEndClear(t *testing.T) {
	var pids []*actor.PID
	for i := range 50 {
		pids = append(pids, &actor.PID{Id: fmt.Sprintf("s-%d", i)})
	}
	set := actor.NewPIDSet(pids...)
	for i, p := range pids {
		if i%2 == 0 {
			set.Remove(p)
			dropStalePIDs(set.Values())
		}
	}
	for _, p := range pids[1:] {
		set.Remove(p)
		dropStalePIDs(set.Values())
		kids := set.Values()
		for j, stale := range kids[len(kids):cap(kids)] {
			require.Nil(t, stale, "slot %d past the end", j)
		}
	}
	assert.Zero(t, set.Len())
}
