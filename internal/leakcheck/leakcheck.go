// Package leakcheck is the TestMain of troupe's test packages: it fails the
// run when a goroutine is left behind (goleak) or when an internal invariant
// of package actors was found broken.
package leakcheck

import (
	"fmt"
	"os"
	"testing"

	"github.com/troupe-go/troupe/actors"
	"go.uber.org/goleak"
)

// Main runs the tests of a package, then checks for leaks and violations.
func Main(m *testing.M) {
	code := m.Run()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintf(os.Stderr, "leakcheck: goroutines left behind: %v\n", err)
			code = 1
		}
		if n := actors.Violations(); n != 0 {
			fmt.Fprintf(os.Stderr, "leakcheck: %d internal invariant violations\n", n)
			code = 1
		}
	}
	os.Exit(code)
}
