package adaptive

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// spec: AL1
// The slots the stage holds follow the gate: an opening pays what is owed
// first, then frees held slots; a closing is owed, paid by the slots of
// calls that end (keep) or free ones taken back (take, untake).
func TestAL1_SlotsFollowTheGate(t *testing.T) {
	s := slots{held: 40}
	assert.Equal(t, 3, s.open(3))
	assert.Equal(t, slots{held: 37}, s)
	s.close(5)
	assert.Equal(t, slots{held: 37, owed: 5}, s)
	assert.True(t, s.keep())
	assert.True(t, s.take())
	s.untake()
	assert.Equal(t, slots{held: 38, owed: 4}, s)
	assert.Equal(t, 0, s.open(3), "paid by what is owed")
	assert.Equal(t, 1, s.open(2))
	assert.Equal(t, slots{held: 37}, s)
	assert.False(t, s.keep())
	assert.False(t, s.take())
}
