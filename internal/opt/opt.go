// Package opt applies functional options the one way every troupe
// constructor does: in order, a nil option being a configuration error
// that matches troupe.ErrBadConfig (never a panic, never skipped), and a
// nil function given to an option the same.
package opt

import (
	"fmt"

	"github.com/troupe-go/troupe"
)

// Apply applies opts to c in order. A nil option is an error naming where
// (the constructor) and its place, matching troupe.ErrBadConfig; the
// options after it are not applied.
func Apply[C any, O ~func(*C)](where string, c *C, opts []O) error {
	for i, o := range opts {
		if o == nil {
			return Nil(where, fmt.Sprintf("option %d of %d", i+1, len(opts)))
		}
		o(c)
	}
	return nil
}

// Nil returns the error for what, given nil to where (a nil option, a nil
// function): a *troupe.ConfigError.
func Nil(where, what string) error {
	return &troupe.ConfigError{Stage: where, Option: what, Why: "nil"}
}

// As returns fn, a function an option kept untyped (its types are the
// stage's, which only the constructor knows), as an F; ok is false when fn
// is neither nil nor an F. A nil fn is the zero F.
func As[F any](fn any) (f F, ok bool) {
	if fn == nil {
		return f, true
	}
	f, ok = fn.(F)
	return f, ok
}

// Bad returns the *troupe.ConfigError of stage for option given value: why
// says what the value must be.
func Bad(stage, option string, value any, why string) error {
	return &troupe.ConfigError{Stage: stage, Option: option, Value: value, Why: why}
}
