package stagekit

import (
	"fmt"
	"testing"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe/mailbox"
)

// A host forgets each closed child in constant time, and a burst of
// children leaves no table behind once they are gone: the map is remade
// when it falls to a quarter of its most, and dropped when empty.
func TestHostForgetsClosedChildrenAndShrinks(t *testing.T) {
	a := &supervisorActor{}
	mb := &mailbox.Mailbox{}
	const n = 1000
	for i := range n {
		a.addKid(fmt.Sprintf("s-%d", i), mb)
	}
	require.Len(t, a.kids, n)
	assert.Equal(t, n, a.kidsHW)
	for i := range 3 * n / 4 {
		a.forgetKid(&actor.PID{Id: fmt.Sprintf("s-%d", i)})
	}
	assert.Len(t, a.kids, n/4)
	assert.Equal(t, n/4, a.kidsHW, "remade at a quarter of its most")
	a.forgetKid(&actor.PID{Id: "never-spawned"})
	assert.Len(t, a.kids, n/4, "an unknown child changes nothing")
	for i := 3 * n / 4; i < n; i++ {
		a.forgetKid(&actor.PID{Id: fmt.Sprintf("s-%d", i)})
	}
	assert.Nil(t, a.kids, "no table left behind")
	assert.Zero(t, a.kidsHW)
}

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
