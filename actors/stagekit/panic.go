package stagekit

import (
	"runtime/debug"

	"github.com/troupe-go/troupe"
)

// Guard runs fn, a piece of user code (a policy method, a predicate, a
// callback, a plain Service's Reserve...), and turns a panic in it into a
// *troupe.PanicError naming where, with the stack at the panic. It is the one
// place every stage runs code it did not write, so that such a panic is an
// outcome for the callers it affects and never a crash or a hang. It is safe
// for concurrent use and adds no allocation when fn does not panic.
func Guard(where string, fn func()) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = newPanicError(where, v)
		}
	}()
	fn()
	return nil
}

// Guard1 is Guard for user code that returns a value and an error: a panic
// yields the zero value and a *troupe.PanicError.
func Guard1[T any](where string, fn func() (T, error)) (v T, err error) {
	defer func() {
		if r := recover(); r != nil {
			var zero T
			v, err = zero, newPanicError(where, r)
		}
	}()
	return fn()
}

func newPanicError(where string, v any) *troupe.PanicError {
	return &troupe.PanicError{Where: where, Value: v, Stack: debug.Stack()}
}
