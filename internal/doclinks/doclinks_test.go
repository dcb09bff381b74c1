package doclinks_test

import (
	"errors"
	"fmt"
	"go/ast"
	"go/doc/comment"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// Every doc comment of every module names only what exists: each doc link
// ([Name], [Type.Method], [pkg.Name], [path/to/pkg.Name]) resolves as go
// doc resolves it and names a declared identifier, and each plain mention
// of a package known to the comment's package (its own name, a package it
// imports, a package of this repository) followed by a name (pkg.Name,
// pkg.Type.Method) names a declared identifier too.
//
// spec: REL3
func TestDocCommentsNameOnlyWhatExists(t *testing.T) {
	w, err := loadOnce()
	if errors.Is(err, errNoWorkspace) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	var bad []string
	for _, p := range w.own {
		for _, f := range p.files {
			for _, dc := range docComments(f) {
				where := p.fset.Position(dc.Pos())
				where.Filename = strings.TrimPrefix(where.Filename, w.root+"/")
				for _, problem := range w.check(p, dc.Text(), dc.params) {
					bad = append(bad, fmt.Sprintf("%s: %s", where, problem))
				}
			}
		}
	}
	slices.Sort(bad)
	bad = slices.Compact(bad)
	for _, b := range bad {
		t.Error(b)
	}
	if len(w.own) < 30 {
		t.Fatalf("only %d packages checked: the workspace was not listed", len(w.own))
	}
}

// A doc link or a mention of a name that does not exist is found, and one
// that does is not (the checker itself, on comments made up here).
//
// spec: REL3
func TestTheCheckerFindsWhatDoesNotExist(t *testing.T) {
	w, err := loadOnce()
	if errors.Is(err, errNoWorkspace) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	core := w.byPath["github.com/troupe-go/troupe/actors"]
	if core == nil {
		t.Fatal("package actors not loaded")
	}
	for text, want := range map[string]int{
		"[System] and [System.Shutdown], [troupe.ErrBadConfig], [context.Context]": 0,
		"troupe.ErrBadConfig, stagekit.HostFrom, actors.System.NewHost":            0,
		"[github.com/troupe-go/troupe/stages.Stack] and [Func]":                    0,
		"[System.Stop]":           1,
		"[Nothing]":               1,
		"actors.ErrBadConfig":     1,
		"[troupe.ErrNothing]":     1,
		"[stages.Stack]":          1, // not imported by package actors: go doc shows the brackets
		"a[i] and [n] and [1, 2)": 0,
		"see actors.Nothing":      1,
	} {
		if got := w.check(core, text, nil); len(got) != want {
			t.Errorf("%q: %d problems, want %d: %q", text, len(got), want, got)
		}
	}
}

// docComment is a doc comment, and the names of the parameters of the
// function it documents: there, param.Method is the parameter's.
type docComment struct {
	*ast.CommentGroup
	params map[string]bool
}

// docComments returns the doc comments of f: the package's, and each
// declaration's, field's and method's.
func docComments(f *ast.File) []docComment {
	var out []docComment
	add := func(cg *ast.CommentGroup) {
		if cg != nil {
			out = append(out, docComment{CommentGroup: cg})
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.File:
			add(n.Doc)
		case *ast.GenDecl:
			add(n.Doc)
		case *ast.FuncDecl:
			if n.Doc != nil {
				params := map[string]bool{}
				for _, fl := range []*ast.FieldList{n.Recv, n.Type.Params, n.Type.Results} {
					for _, fd := range fieldsOf(fl) {
						for _, name := range fd.Names {
							params[name.Name] = true
						}
					}
				}
				out = append(out, docComment{CommentGroup: n.Doc, params: params})
			}
			return false // comments inside a body are not doc comments
		case *ast.TypeSpec:
			add(n.Doc)
		case *ast.ValueSpec:
			add(n.Doc)
		case *ast.Field:
			add(n.Doc)
		}
		return true
	})
	return out
}

func fieldsOf(fl *ast.FieldList) []*ast.Field {
	if fl == nil {
		return nil
	}
	return fl.List
}

// mention is pkg.Name or pkg.Type.Name in plain text.
var mention = regexp.MustCompile(`(?:^|[^\w./\[])([a-z][a-z0-9]*)\.([A-Z]\w*)(?:\.([A-Z]\w*))?`)

// check returns what is wrong with the names text, a doc comment of p,
// refers to; params are names that are not packages there.
func (w *workspace) check(p *pkg, text string, params map[string]bool) []string {
	var bad []string
	permissive := &comment.Parser{
		LookupPackage: func(name string) (string, bool) { return name, true },
		LookupSym:     func(string, string) bool { return true },
	}
	for _, l := range docLinks(permissive.Parse(text)) {
		if problem := w.checkLink(p, l); problem != "" {
			bad = append(bad, problem)
		}
	}
	for _, m := range mention.FindAllStringSubmatch(text, -1) {
		target := w.known(p, m[1])
		if target == nil || params[m[1]] {
			continue
		}
		recv, name := "", m[2]
		if m[3] != "" {
			recv, name = m[2], m[3]
		}
		if !target.has(recv, name) {
			bad = append(bad, fmt.Sprintf("%s names nothing in package %s", strings.TrimLeft(m[0], " \t\n([{,;:'\"`*!-"), target.ImportPath))
		}
	}
	return bad
}

// checkLink checks one doc link, as the permissive parser read it: its
// ImportPath is the package as written.
func (w *workspace) checkLink(p *pkg, l *comment.DocLink) string {
	written := "[" + l.ImportPath
	if l.Recv != "" {
		written += "." + l.Recv
	}
	if l.Name != "" {
		if written != "[" {
			written += "."
		}
		written += l.Name
	}
	written += "]"
	var target *pkg
	switch path := l.ImportPath; {
	case path == "" || path == p.Name:
		target = p
	case strings.Contains(path, "/"):
		target = w.pkgAt(path)
		if target == nil {
			return written + ": no package " + path
		}
	default:
		if full, ok := p.imports[path]; ok {
			target = w.pkgAt(full)
		} else if std, ok := comment.DefaultLookupPackage(path); ok {
			target = w.pkgAt(std)
		}
		if target == nil {
			if l.Name == "" {
				return "" // [word]: not a link, and go doc shows it as it is
			}
			return written + ": package " + path + " is not imported here, so go doc does not link it (write its import path)"
		}
	}
	if l.Name == "" || target.has(l.Recv, l.Name) {
		return ""
	}
	return written + " names nothing in package " + target.ImportPath
}

// known returns the package a plain mention of name means in p, or nil.
func (w *workspace) known(p *pkg, name string) *pkg {
	if name == p.Name {
		return p
	}
	if path, ok := p.imports[name]; ok {
		return w.pkgAt(path)
	}
	return w.byName[name]
}

// pkgAt returns the package at path, listing it if no package of the
// workspace imports it; nil if there is none.
func (w *workspace) pkgAt(path string) *pkg {
	if p, ok := w.byPath[path]; ok && p != nil {
		return p
	}
	ls, err := goList(w.root, true, path)
	if err != nil || len(ls) != 1 || ls[0].Error != nil {
		return nil
	}
	p, err := parse(ls[0])
	if err != nil {
		return nil
	}
	w.byPath[path] = p
	return p
}

// docLinks returns the doc links of d.
func docLinks(d *comment.Doc) []*comment.DocLink {
	var out []*comment.DocLink
	var text func([]comment.Text)
	text = func(ts []comment.Text) {
		for _, t := range ts {
			switch t := t.(type) {
			case *comment.DocLink:
				out = append(out, t)
			case *comment.Link:
				text(t.Text)

			}
		}
	}
	var blocks func([]comment.Block)
	blocks = func(bs []comment.Block) {
		for _, b := range bs {
			switch b := b.(type) {
			case *comment.Paragraph:
				text(b.Text)
			case *comment.Heading:
				text(b.Text)
			case *comment.List:
				for _, it := range b.Items {
					blocks(it.Content)
				}
			}
		}
	}
	blocks(d.Content)
	return out
}
