package stagekit_test

import (
	"testing"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors/stagekit"
	"github.com/troupe-go/troupe/troupetest"
)

// stage spawns a pass-through stage of capacity n over inner.
func stage(t testing.TB, h troupe.Host, inner troupe.Service[int, int], n int) *stagekit.Stage[int, int] {
	t.Helper()
	s, err := stagekit.Spawn(h, stagekit.Config{Name: "test", Capacity: n}, inner, stagekit.Passthrough[int, int]{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// overMock returns a system, a stage of capacity n over a mock, and the mock's handle.
func overMock(t testing.TB, n int) (*stagekit.System, *stagekit.Stage[int, int], *troupetest.Handle[int, int]) {
	sys := troupetest.NewSystem(t)
	mock, h := troupetest.NewMock[int, int]()
	return sys.ActorsHost().System(), stage(t, sys, mock, n), h
}
