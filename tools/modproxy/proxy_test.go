package main

import (
	"archive/zip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/mod/module"
	modzip "golang.org/x/mod/zip"
)

// repo makes a git repository of troupe's layout whose siblings require the
// core at v, and returns its directory.
func repo(t *testing.T, grpcRequires, otelRequires string) string {
	t.Helper()
	dir := t.TempDir()
	core := "github.com/troupe-go/troupe"
	files := map[string]string{
		"go.mod":              "module " + core + "\n\ngo 1.26\n",
		"troupe.go":           "package troupe\n",
		"stages/stages.go":    "package stages\n",
		"troupegrpc/go.mod":   "module " + core + "/troupegrpc\n\ngo 1.26\n\nrequire " + core + " " + grpcRequires + "\n\nreplace " + core + " => ../\n",
		"troupegrpc/grpc.go":  "package troupegrpc\n",
		"troupeotel/go.mod":   "module " + core + "/troupeotel\n\ngo 1.26\n\nrequire " + core + " " + otelRequires + "\n",
		"troupeotel/otel.go":  "package troupeotel\n",
		"redisquota/go.mod":   "module " + core + "/redisquota\n\ngo 1.26\n\nrequire " + core + " " + otelRequires + "\n",
		"redisquota/redis.go": "package redisquota\n",
		"examples/x/go.mod":   "module " + core + "/examples/x\n\ngo 1.26\n",
		"examples/x/main.go":  "package main\n",
	}
	for name, text := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "."}, {"commit", "-q", "-m", "x"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	// A file written after the commit is not part of the release.
	if err := os.WriteFile(filepath.Join(dir, "later.go"), []byte("package troupe\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// The proxy holds each published module at the version the siblings
// require, as a proxy serves it: the core's zip without the files of the
// modules nested in it, nor files that are not committed.
//
// spec: REL1
func TestTheProxyHoldsEveryPublishedModuleAtTheRequiredVersion(t *testing.T) {
	dir := repo(t, "v0.1.0", "v0.1.0")
	out := t.TempDir()
	v, err := build(dir, "HEAD", out)
	if err != nil {
		t.Fatal(err)
	}
	if v != "v0.1.0" {
		t.Fatalf("version %s, want v0.1.0", v)
	}
	want := map[string][]string{
		"github.com/troupe-go/troupe":            {"go.mod", "troupe.go", "stages/stages.go"},
		"github.com/troupe-go/troupe/troupegrpc": {"go.mod", "grpc.go"},
		"github.com/troupe-go/troupe/troupeotel": {"go.mod", "otel.go"},
		"github.com/troupe-go/troupe/redisquota": {"go.mod", "redis.go"},
	}
	for path, files := range want {
		at := filepath.Join(out, filepath.FromSlash(path), "@v")
		list, err := os.ReadFile(filepath.Join(at, "list"))
		if err != nil || string(list) != "v0.1.0\n" {
			t.Errorf("%s: list %q, %v", path, list, err)
		}
		info, err := os.ReadFile(filepath.Join(at, "v0.1.0.info"))
		if err != nil || !strings.Contains(string(info), `"Version":"v0.1.0"`) {
			t.Errorf("%s: info %s, %v", path, info, err)
		}
		mod, err := os.ReadFile(filepath.Join(at, "v0.1.0.mod"))
		if err != nil || !strings.HasPrefix(string(mod), "module "+path+"\n") {
			t.Errorf("%s: go.mod %q, %v", path, mod, err)
		}
		zipFile := filepath.Join(at, "v0.1.0.zip")
		if _, err := modzip.CheckZip(module.Version{Path: path, Version: "v0.1.0"}, zipFile); err != nil {
			t.Errorf("%s: %v", path, err)
		}
		z, err := zip.OpenReader(zipFile)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, f := range z.File {
			got = append(got, strings.TrimPrefix(f.Name, path+"@v0.1.0/"))
		}
		z.Close()
		if strings.Join(sorted(got), " ") != strings.Join(sorted(files), " ") {
			t.Errorf("%s's zip holds %v, want %v", path, got, files)
		}
	}
}

// A sibling that requires v0.0.0, or siblings that disagree, make no
// proxy: a user's build could not resolve them.
//
// spec: REL1
func TestNoProxyForModulesThatRequireNoRelease(t *testing.T) {
	for _, tc := range []struct{ grpc, otel, says string }{
		{"v0.0.0", "v0.0.0", "v0.0.0"},
		{"v0.1.0", "v0.2.0", "one release has one version"},
	} {
		_, err := build(repo(t, tc.grpc, tc.otel), "HEAD", t.TempDir())
		if err == nil || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("siblings at %s and %s: %v, want an error saying %q", tc.grpc, tc.otel, err, tc.says)
		}
	}
}

func sorted(s []string) []string { return slices.Sorted(slices.Values(s)) }
