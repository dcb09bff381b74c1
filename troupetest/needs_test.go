package troupetest_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/troupe-go/troupe/troupetest"
)

const needEnv = "TROUPETEST_NEED"

func TestMain(m *testing.M) {
	if name := os.Getenv(needEnv); name != "" {
		fmt.Println("found:", troupetest.NeedCommand(name, "apt-get install -y "+name))
		os.Exit(0)
	}
	troupetest.Main(m)
}

// need re-runs the test binary as a process without a terminal that calls
// NeedCommand(name), with CI set to ci, and returns its output and exit
// status.
func need(t *testing.T, name, ci string) (string, int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), needEnv+"="+name, "CI="+ci)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true} // no controlling terminal: the line goes to stderr
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return out.String(), exit.ExitCode()
	}
	if err != nil {
		t.Fatal(err)
	}
	return out.String(), 0
}

// A missing program is said, even where the tests pass, and fails the
// package under CI; a program on the PATH is found quietly.
//
// spec: REL4
func TestAMissingProgramIsSaidAndFailsUnderCI(t *testing.T) {
	const missing = "troupetest-no-such-program"
	out, code := need(t, missing, "")
	if code != 0 || !strings.Contains(out, "--- SKIP troupetest: "+missing+" not found") || !strings.Contains(out, "found: false") {
		t.Errorf("missing, not CI: exit %d, %q", code, out)
	}
	out, code = need(t, missing, "true")
	if code != 1 || !strings.Contains(out, missing+" not found, and CI=true runs the tests that need it") || strings.Contains(out, "found:") {
		t.Errorf("missing, CI=true: exit %d, %q", code, out)
	}
	out, code = need(t, "go", "true")
	if code != 0 || out != "found: true\n" {
		t.Errorf("present: exit %d, %q", code, out)
	}
}
