package stagekit

import (
	"log/slog"
	"sync/atomic"
)

var violations atomic.Uint64

// invariant records a broken internal invariant: a troupe bug, never a
// user's mistake. troupe does not panic on it; it logs and counts it, and
// every test of this module fails when the count is not zero.
func invariant(what string) {
	violations.Add(1)
	slog.Default().Error("troupe: internal invariant broken (please report)", "what", what)
}

// Violations reports how many internal invariants were found broken in this
// process. It is always zero unless troupe has a bug.
func Violations() uint64 { return violations.Load() }
