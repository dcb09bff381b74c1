package timeout

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
)

// An idle pipeline is mostly its stages' bytes: the behaviour of a timeout
// stays in the 96-byte size class (Abandon mode's counter is out of line),
// and its stage type in the 16-byte one.
func TestIdleStageKeepsItsSizeClasses(t *testing.T) {
	assert.LessOrEqual(t, unsafe.Sizeof(behavior[int, string]{}), uintptr(96))
	assert.LessOrEqual(t, unsafe.Sizeof(Timeout[int, string]{}), uintptr(16))
}
