package stagekit

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
)

// The callers' counter fills exactly one 64-byte line (the allocator then
// aligns it, and the stage's cold fields use what the counter leaves), and
// a Stage stays within the 320-byte size class: idle pipelines are mostly
// their stages. A Handle, which every stage type embeds, is one word.
func TestStageLayoutKeepsItsSizeClasses(t *testing.T) {
	assert.Equal(t, uintptr(64), unsafe.Sizeof(entries[int, string]{}))
	assert.Equal(t, uintptr(64), unsafe.Sizeof(entries[[100]byte, struct{}]{}))
	assert.LessOrEqual(t, unsafe.Sizeof(Stage[int, string]{}), uintptr(320))
	assert.Equal(t, unsafe.Sizeof(uintptr(0)), unsafe.Sizeof(Handle[int, string]{}))
}
