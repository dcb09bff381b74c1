package doclinks_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
)

// listed is a package as go list describes it.
type listed struct {
	ImportPath string
	Name       string
	Dir        string
	GoFiles    []string
	CgoFiles   []string
	Imports    []string
	Standard   bool
	Error      *struct{ Err string }
}

// pkg is a parsed package: its files and what it declares.
type pkg struct {
	listed
	fset    *token.FileSet
	files   []*ast.File
	syms    map[string]bool // top-level names, and Type.Member
	open    map[string]bool // types whose members cannot be listed (embedding, aliases)
	imports map[string]string
}

// has reports whether p declares name (recv == "") or recv.name.
func (p *pkg) has(recv, name string) bool {
	if recv == "" {
		return p.syms[name]
	}
	return p.syms[recv] && (p.open[recv] || p.syms[recv+"."+name])
}

// workspace is every package of the workspace's modules and the packages
// they import, loaded once for the process.
type workspace struct {
	root   string
	own    []*pkg          // the workspace's packages
	byPath map[string]*pkg // own and imported, by import path
	byName map[string]*pkg // own packages by name, where the name is unique
}

var loadOnce = sync.OnceValues(load)

func load() (*workspace, error) {
	root, err := workspaceRoot()
	if err != nil {
		return nil, err
	}
	own, err := goList(root, false, "work")
	if err != nil {
		return nil, err
	}
	w := &workspace{root: root, byPath: map[string]*pkg{}, byName: map[string]*pkg{}}
	names := map[string]int{}
	var deps []string
	for _, l := range own {
		p, err := parse(l)
		if err != nil {
			return nil, err
		}
		w.own = append(w.own, p)
		w.byPath[l.ImportPath] = p
		names[l.Name]++
		deps = append(deps, l.Imports...)
	}
	for _, p := range w.own {
		if names[p.Name] == 1 {
			w.byName[p.Name] = p
		}
	}
	var missing []string
	for _, d := range deps {
		if _, ok := w.byPath[d]; !ok && d != "C" {
			missing = append(missing, d)
			w.byPath[d] = nil
		}
	}
	if len(missing) > 0 {
		imported, err := goList(root, true, missing...)
		if err != nil {
			return nil, err
		}
		for _, l := range imported {
			p, err := parse(l)
			if err != nil {
				return nil, err
			}
			w.byPath[l.ImportPath] = p
		}
	}
	for _, p := range w.own {
		for _, path := range p.Imports {
			if d := w.byPath[path]; d != nil {
				p.imports[d.Name] = path
			}
		}
		for _, f := range p.files { // renamed imports
			for _, is := range f.Imports {
				if is.Name != nil && is.Name.Name != "_" && is.Name.Name != "." {
					p.imports[is.Name.Name] = strings.Trim(is.Path.Value, `"`)
				}
			}
		}
	}
	return w, nil
}

// errNoWorkspace: the test runs outside troupe's repository (from a module
// cache, say), where there is no workspace to check.
var errNoWorkspace = errors.New("no go.work above the test's directory: not troupe's repository")

// workspaceRoot is the directory of the go.work above the test.
func workspaceRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.work")); err == nil {
			return dir, nil
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", errNoWorkspace
		}
		dir = up
	}
}

// goList lists patterns in the workspace at root, whether or not the test
// runs with GOWORK=off; with find, without their imports.
func goList(root string, find bool, patterns ...string) ([]listed, error) {
	args := []string{"list", "-e", "-json=ImportPath,Name,Dir,GoFiles,CgoFiles,Imports,Standard,Error"}
	if find {
		args = append(args, "-find")
	}
	args = append(args, patterns...)
	cmd := exec.Command("go", args...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOWORK="+filepath.Join(root, "go.work"), "GOFLAGS=")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, errors.New("go list: " + err.Error() + ": " + stderr.String())
	}
	var ls []listed
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var l listed
		if err := dec.Decode(&l); err != nil {
			return nil, err
		}
		ls = append(ls, l)
	}
	return ls, nil
}

// parse parses l's files (tests excluded: go doc does not show them) and
// collects what they declare.
func parse(l listed) (*pkg, error) {
	p := &pkg{listed: l, fset: token.NewFileSet(), syms: map[string]bool{}, open: map[string]bool{}, imports: map[string]string{}}
	if l.Error != nil {
		return nil, errors.New(l.ImportPath + ": " + l.Error.Err)
	}
	for _, name := range append(l.GoFiles, l.CgoFiles...) {
		f, err := parser.ParseFile(p.fset, filepath.Join(l.Dir, name), nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		p.files = append(p.files, f)
		p.declare(f)
	}
	return p, nil
}

func (p *pkg) declare(f *ast.File) {
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Recv == nil {
				p.syms[d.Name.Name] = true
			} else {
				p.syms[recvName(d.Recv.List[0].Type)+"."+d.Name.Name] = true
			}
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.ValueSpec:
					for _, n := range s.Names {
						p.syms[n.Name] = true
					}
				case *ast.TypeSpec:
					p.declareType(s)
				}
			}
		}
	}
}

func (p *pkg) declareType(s *ast.TypeSpec) {
	t := s.Name.Name
	p.syms[t] = true
	if s.Assign.IsValid() {
		p.open[t] = true
		return
	}
	var fields *ast.FieldList
	switch u := s.Type.(type) {
	case *ast.StructType:
		fields = u.Fields
	case *ast.InterfaceType:
		fields = u.Methods
	default:
		return // a defined type over another has the fields of the other's struct, and its own methods
	}
	for _, f := range fields.List {
		if len(f.Names) == 0 {
			p.open[t] = true // embedded: promoted members come from elsewhere
			continue
		}
		for _, n := range f.Names {
			p.syms[t+"."+n.Name] = true
		}
	}
}

// recvName is the type name of a method's receiver.
func recvName(e ast.Expr) string {
	for {
		switch x := e.(type) {
		case *ast.StarExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.IndexListExpr:
			e = x.X
		case *ast.Ident:
			return x.Name
		default:
			return ""
		}
	}
}
