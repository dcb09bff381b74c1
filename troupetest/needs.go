// Tests that need a program: see NeedCommand.
package troupetest

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// NeedCommand is for the TestMain of a package whose tests run a program
// (redis-server, for one) and skip where it is not installed. It reports
// whether name is on the PATH. Where it is not, it says so where the person
// running the tests sees it even when they pass: on the terminal
// (/dev/tty), since go test shows a passing package's output only with -v,
// or on stderr where there is no terminal. Under CI (CI=true), which
// promises to run those tests, a missing program fails the package
// instead: NeedCommand prints why on stderr and exits with status 1.
//
//	func TestMain(m *testing.M) {
//		troupetest.NeedCommand("redis-server", "apt-get install -y redis-server")
//		troupetest.Main(m)
//	}
func NeedCommand(name, install string) bool {
	if _, err := exec.LookPath(name); err == nil {
		return true
	}
	pkg := strings.TrimSuffix(filepath.Base(os.Args[0]), ".test")
	if os.Getenv("CI") == "true" {
		fmt.Fprintf(os.Stderr, "%s: %s not found, and CI=true runs the tests that need it: install it (%s)\n", pkg, name, install)
		os.Exit(1)
	}
	var w io.Writer = os.Stderr
	if tty, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0); err == nil {
		defer tty.Close()
		w = tty
	}
	fmt.Fprintf(w, "--- SKIP %s: %s not found: the tests that need it skip (to run them: %s)\n", pkg, name, install)
	return false
}
