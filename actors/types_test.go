package actors_test

import (
	"context"
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/actors/stagekit"
)

// The types a user touches are declared in package actors, so that go doc
// lists their methods here: no alias into the stage kit.
//
// spec: REL3
func TestTheRuntimeTypesAreDeclaredInPackageActorsWithTheirMethods(t *testing.T) {
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, ".", nil, parser.ParseComments|parser.SkipObjectResolution)
	require.NoError(t, err)
	pkg := pkgs["actors"]
	require.NotNil(t, pkg)
	for _, f := range pkg.Files {
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.TYPE {
				continue
			}
			for _, s := range g.Specs {
				ts := s.(*ast.TypeSpec)
				assert.False(t, ts.Assign.IsValid(), "%s is an alias: go doc would not list its methods in package actors", ts.Name)
			}
		}
	}
	files := make([]*ast.File, 0, len(pkg.Files))
	for _, f := range pkg.Files {
		files = append(files, f)
	}
	dp, err := doc.NewFromFiles(fset, files, "github.com/troupe-go/troupe/actors")
	require.NoError(t, err)
	methods := map[string][]string{}
	for _, ty := range dp.Types {
		for _, m := range ty.Methods {
			methods[ty.Name] = append(methods[ty.Name], m.Name)
		}
		for _, f := range ty.Funcs {
			methods[ty.Name] = append(methods[ty.Name], f.Name)
		}
	}
	want := map[string][]string{
		"System":      {"NewSystem", "Default", "Shutdown", "NewHost", "Host", "Logger"},
		"Host":        {"Close", "Name", "System"},
		"FuncService": {"Func", "Reserve", "Validate", "Name"},
		"Failure":     {"NewFailure", "Within"},
		"Strategy":    {"Intensity", "DefaultStrategy"},
		"Option":      {"WithLogger", "WithDroppedPermitCheck", "WithObserver"},
	}
	for ty, names := range want {
		for _, n := range names {
			assert.Contains(t, methods[ty], n, "go doc actors.%s does not show %s", ty, n)
		}
	}
}

// A FuncService of package actors offers every method of the stage kit's
// (the runtime finds its non-blocking side, its name and its validation
// through them), so that nothing is lost on the way from one to the other.
func TestAFuncServiceHasEveryMethodOfTheStageKits(t *testing.T) {
	kit := reflect.TypeFor[*stagekit.FuncService[int, string]]()
	ours := reflect.TypeFor[*actors.FuncService[int, string]]()
	for i := range kit.NumMethod() {
		m := kit.Method(i)
		o, ok := ours.MethodByName(m.Name)
		if assert.True(t, ok, "actors.FuncService has no %s", m.Name) {
			assert.Equal(t, signature(m.Type), signature(o.Type), m.Name)
		}
	}
	var _ stagekit.InnerSider[int, string] = actors.Func(func(_ context.Context, v int) (string, error) { return "", nil })
}

// signature is a method's type without its receiver.
func signature(f reflect.Type) string {
	in := make([]reflect.Type, 0, f.NumIn()-1)
	for i := 1; i < f.NumIn(); i++ {
		in = append(in, f.In(i))
	}
	out := make([]reflect.Type, 0, f.NumOut())
	for i := range f.NumOut() {
		out = append(out, f.Out(i))
	}
	return reflect.FuncOf(in, out, f.IsVariadic()).String()
}
