package stages_test

import (
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The package doc names every stage package below it and every method of
// the Builder: what the package holds is listed where go doc shows it.
//
// spec: REL3
func TestThePackageDocListsEveryStageAndEveryBuilderMethod(t *testing.T) {
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, ".", func(fi os.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, parser.ParseComments)
	require.NoError(t, err)
	files := make([]*ast.File, 0, len(pkgs["stages"].Files))
	for _, f := range pkgs["stages"].Files {
		files = append(files, f)
	}
	p, err := doc.NewFromFiles(fset, files, "github.com/troupe-go/troupe/stages")
	require.NoError(t, err)
	entries, err := os.ReadDir(".")
	require.NoError(t, err)
	n := 0
	for _, e := range entries {
		if e.IsDir() {
			n++
			assert.Contains(t, p.Doc, "  - "+e.Name()+": ", "the package doc does not list stage package %s", e.Name())
		}
	}
	assert.Equal(t, 16, n, "stage packages, and balance, steer and mapping")
	assert.Contains(t, p.Doc, "Each of the 13 stages")
	for _, ty := range p.Types {
		if ty.Name != "Builder" {
			continue
		}
		for _, m := range ty.Methods {
			assert.Contains(t, p.Doc, "[Builder."+m.Name+"]", "the package doc does not name Builder.%s", m.Name)
		}
		return
	}
	t.Fatal("no Builder")
}
