package actors

import (
	"runtime/debug"

	"github.com/troupe-go/troupe"
)

func newPanicError(where string, v any) *troupe.PanicError {
	return &troupe.PanicError{Where: where, Value: v, Stack: debug.Stack()}
}
