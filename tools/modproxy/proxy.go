package main

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
	"golang.org/x/mod/semver"
	modzip "golang.org/x/mod/zip"
)

// published are the directories, in the repository, of the modules a
// release tags: the core first.
var published = []string{"", "troupegrpc", "troupeotel", "redisquota"}

// released is one module at a revision.
type released struct {
	dir   string // in the repository; "" for the core
	path  string // its module path
	gomod []byte
	file  *modfile.File
}

// build writes the proxy for the modules at rev into out and returns their
// version.
func build(repo, rev, out string) (string, error) {
	mods := make([]released, 0, len(published))
	for _, dir := range published {
		m, err := readModule(repo, rev, dir)
		if err != nil {
			return "", err
		}
		mods = append(mods, m)
	}
	v, err := version(mods)
	if err != nil {
		return "", err
	}
	when, err := git(repo, "log", "-1", "--format=%cI", rev)
	if err != nil {
		return "", err
	}
	t, err := time.Parse(time.RFC3339, strings.TrimSpace(string(when)))
	if err != nil {
		return "", fmt.Errorf("commit time of %s: %w", rev, err)
	}
	tree, err := os.MkdirTemp("", "modproxy-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tree)
	if err := extract(repo, rev, tree); err != nil {
		return "", err
	}
	for _, m := range mods {
		if err := write(filepath.Join(tree, filepath.FromSlash(m.dir)), out, m, v, t.UTC()); err != nil {
			return "", err
		}
	}
	return v, nil
}

// extract writes the files of the repository at rev into dir: what git
// archive holds, so nothing uncommitted or ignored (and it works in a git
// worktree, where zip.CreateFromVCS does not).
func extract(repo, rev, dir string) error {
	data, err := git(repo, "-c", "core.autocrlf=input", "-c", "core.eol=lf", "archive", "--format=zip", rev)
	if err != nil {
		return err
	}
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return err
	}
	for _, f := range zr.File {
		if f.FileInfo().IsDir() {
			continue
		}
		if !f.Mode().IsRegular() {
			return fmt.Errorf("%s at %s: %s is not a regular file", repo, rev, f.Name)
		}
		p := filepath.Join(dir, filepath.FromSlash(f.Name))
		if !strings.HasPrefix(p, dir+string(filepath.Separator)) {
			return fmt.Errorf("%s at %s: %s is outside the tree", repo, rev, f.Name)
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := copyOut(f, p); err != nil {
			return err
		}
	}
	return nil
}

func copyOut(f *zip.File, p string) error {
	r, err := f.Open()
	if err != nil {
		return err
	}
	defer r.Close()
	w, err := os.Create(p)
	if err != nil {
		return err
	}
	if _, err := io.Copy(w, r); err != nil {
		w.Close()
		return err
	}
	return w.Close()
}

// readModule reads the go.mod of the module in dir at rev.
func readModule(repo, rev, dir string) (released, error) {
	name := path.Join(dir, "go.mod")
	data, err := git(repo, "show", rev+":"+name)
	if err != nil {
		return released{}, err
	}
	f, err := modfile.ParseLax(name, data, nil)
	if err != nil {
		return released{}, err
	}
	if f.Module == nil {
		return released{}, fmt.Errorf("%s has no module line", name)
	}
	return released{dir: dir, path: f.Module.Mod.Path, gomod: data, file: f}, nil
}

// version returns the version every sibling requires of every published
// module it requires: one version, released (not v0.0.0), canonical.
func version(mods []released) (string, error) {
	paths := map[string]bool{}
	for _, m := range mods {
		paths[m.path] = true
	}
	v := ""
	for _, m := range mods[1:] {
		requiresCore := false
		for _, r := range m.file.Require {
			if !paths[r.Mod.Path] {
				continue
			}
			requiresCore = requiresCore || r.Mod.Path == mods[0].path
			switch {
			case v == "":
				v = r.Mod.Version
			case r.Mod.Version != v:
				return "", fmt.Errorf("%s requires %s %s, another module %s: one release has one version", m.path, r.Mod.Path, r.Mod.Version, v)
			}
		}
		if !requiresCore {
			return "", fmt.Errorf("%s does not require %s", m.path, mods[0].path)
		}
	}
	switch {
	case !semver.IsValid(v) || semver.Canonical(v) != v || semver.Build(v) != "":
		return "", fmt.Errorf("the modules require %q, not a canonical release version (vX.Y.Z)", v)
	case semver.Compare(v, "v0.0.0") <= 0:
		return "", fmt.Errorf("the modules require %s: a proxy has no such version, so a user's build cannot resolve it (scripts/release.sh sets a release)", v)
	}
	return v, nil
}

// write writes m at v, whose files are in src, into the proxy directory
// out: its version list, info, go.mod and zip, as a module proxy serves
// them.
func write(src, out string, m released, v string, t time.Time) error {
	esc, err := module.EscapePath(m.path)
	if err != nil {
		return err
	}
	dir := filepath.Join(out, filepath.FromSlash(esc), "@v")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var z bytes.Buffer
	if err := modzip.CreateFromDir(&z, module.Version{Path: m.path, Version: v}, src); err != nil {
		return err
	}
	info, err := json.Marshal(struct {
		Version string
		Time    time.Time
	}{v, t})
	if err != nil {
		return err
	}
	for name, data := range map[string][]byte{
		"list":      []byte(v + "\n"),
		v + ".info": info,
		v + ".mod":  m.gomod,
		v + ".zip":  z.Bytes(),
	} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// git runs git in repo and returns its output.
func git(repo string, args ...string) ([]byte, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = repo
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, errors.New("git " + strings.Join(args, " ") + ": " + err.Error() + ": " + strings.TrimSpace(stderr.String()))
	}
	return out, nil
}
