package retry

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
)

// An idle pipeline is mostly its stages' bytes: the behaviour of a retry with
// Attempts stays in the 224-byte size class (the heap of waits holds no
// functions, a Copy's panic is left in the session), and its stage type in
// the 24-byte one.
func TestIdleStageKeepsItsSizeClasses(t *testing.T) {
	assert.LessOrEqual(t, unsafe.Sizeof(behavior[int, string, Attempts[int, string], *Attempts[int, string]]{}), uintptr(224))
	assert.LessOrEqual(t, unsafe.Sizeof(Retry[int, string]{}), uintptr(24))
}
