package ratelimit

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
)

// An idle pipeline is mostly its stages' bytes: the behaviour of a rate limit
// stays in the 96-byte size class (the observer is read from the stage),
// and its stage type in the 48-byte one.
func TestIdleStageKeepsItsSizeClasses(t *testing.T) {
	assert.LessOrEqual(t, unsafe.Sizeof(behavior[int, string]{}), uintptr(96))
	assert.LessOrEqual(t, unsafe.Sizeof(RateLimit[int, string]{}), uintptr(48))
}
