package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/troupe-go/troupe/troupetest"
)

func TestMain(m *testing.M) { troupetest.Main(m) }

func TestTheQuickStartCallsTheServerTwice(t *testing.T) {
	var out bytes.Buffer
	if err := run(context.Background(), &out); err != nil {
		t.Fatal(err)
	}
	if want := "item 42\nitem 43\n0 of 20 in flight\n"; out.String() != want {
		t.Fatalf("printed %q, want %q", out.String(), want)
	}
}

// The README's quick start is this program, as it is compiled and tested
// here.
//
// spec: REL2
func TestTheReadmesQuickStartIsThisProgram(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	block, ok := quickStart(string(readme))
	if !ok {
		t.Fatal("README.md has no ```go block under its Quick start heading")
	}
	src, err := os.ReadFile("main.go")
	if err != nil {
		t.Fatal(err)
	}
	if block != string(src) {
		t.Fatalf("README.md's quick start differs from examples/quickstart/main.go:\n%s", firstDifference(block, string(src)))
	}
}

// quickStart returns the first go block after the README's "## Quick
// start" heading.
func quickStart(readme string) (string, bool) {
	_, rest, ok := strings.Cut(readme, "\n## Quick start\n")
	if !ok {
		return "", false
	}
	_, rest, ok = strings.Cut(rest, "\n```go\n")
	if !ok {
		return "", false
	}
	block, _, ok := strings.Cut(rest, "\n```\n")
	return block + "\n", ok
}

// firstDifference describes the first line where a and b differ.
func firstDifference(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := range max(len(al), len(bl)) {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y {
			return "line " + strconv.Itoa(i+1) + ":\n  README:  " + x + "\n  main.go: " + y
		}
	}
	return "(same lines)"
}

var vetOnce = sync.OnceValues(vetInNewModule)

// The quick start, pasted into a new module whose go.mod requires troupe and
// adds only a replace line pointing here, passes go vet (outside the
// workspace, as a user's module would build).
//
// spec: REL2
func TestTheQuickStartVetsInANewModule(t *testing.T) {
	if out, err := vetOnce(); err != nil {
		t.Fatalf("go vet in a new module: %v\n%s", err, out)
	}
}

func vetInNewModule() (string, error) {
	dir, err := os.MkdirTemp("", "quickstart-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	root, err := filepath.Abs("../..")
	if err != nil {
		return "", err
	}
	src, err := os.ReadFile("main.go")
	if err != nil {
		return "", err
	}
	sum, err := os.ReadFile(filepath.Join(root, "go.sum")) // the core's dependencies are the program's
	if err != nil {
		return "", err
	}
	gomod := "module example.com/quickstart\n\ngo 1.26\n\nrequire github.com/troupe-go/troupe v0.1.0\n\nreplace github.com/troupe-go/troupe => " + root + "\n"
	for name, data := range map[string][]byte{"main.go": src, "go.mod": []byte(gomod), "go.sum": sum} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return "", err
		}
	}
	var out bytes.Buffer
	for _, args := range [][]string{{"mod", "tidy"}, {"vet", "./..."}} {
		cmd := exec.Command("go", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			return out.String(), err
		}
	}
	return out.String(), nil
}
