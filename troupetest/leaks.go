// Leak checks for a test package: see Main.
package troupetest

import (
	"fmt"
	"os"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors/stagekit"
)

var expected atomic.Uint64

// ExpectDropped declares that the calling test drops n permits on purpose:
// Main then expects troupe.LeakedPermits to count them, and no more.
func ExpectDropped(n uint64) { expected.Add(n) }

// Main is a test package's TestMain: it runs the tests, then fails the run
// when a goroutine was left behind (goleak), when a permit was dropped
// without Call or Release that no test declared (ExpectDropped), or when
// troupe found one of its own invariants broken.
//
//	func TestMain(m *testing.M) { troupetest.Main(m) }
func Main(m *testing.M) {
	code := m.Run()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintf(os.Stderr, "leakcheck: goroutines left behind: %v\n", err)
			code = 1
		}
		if n := stagekit.Violations(); n != 0 {
			fmt.Fprintf(os.Stderr, "leakcheck: %d internal invariant violations\n", n)
			code = 1
		}
		if got, want := droppedPermits(), expected.Load(); got != want {
			fmt.Fprintf(os.Stderr, "leakcheck: %d permits dropped without Call or Release, %d expected\n", got, want)
			code = 1
		}
	}
	os.Exit(code)
}

// droppedPermits collects garbage a few times so that every permit the tests
// dropped is reclaimed (cleanups run after a collection, on the runtime's
// goroutine, with no way to wait for them), then counts them.
func droppedPermits() uint64 {
	deadline := time.Now().Add(time.Second)
	for i := 0; ; i++ {
		runtime.GC()
		time.Sleep(5 * time.Millisecond)
		got := troupe.LeakedPermits()
		if (i >= 10 && got >= expected.Load()) || time.Now().After(deadline) {
			return got
		}
	}
}
