// Package actors is what a user of troupe needs of its actor runtime: the
// actor system stages run in (quiet by default), hosts with their
// supervision strategies, and Func, the innermost service made from a plain
// function. Stages themselves are built with package stages (or the stage
// packages below it); writing a stage of your own is package
// actors/stagekit's business.
//
//	sys := actors.NewSystem()
//	defer sys.Shutdown(ctx)
//	api := actors.Func(fetch)
//	svc, err := stages.Stack[int, string]().Limit(20).Timeout(time.Second).Build(sys, api)
//
// It holds:
//
//   - [System], made by [NewSystem] with [Option] values ([WithLogger],
//     [WithDroppedPermitCheck], [WithObserver]), and the process-wide
//     [Default] one; [System.Shutdown] stops it.
//   - [Host], a supervisor and the stages spawned under it
//     ([System.NewHost]), whose [Strategy] decides on each [Failure] with a
//     [Decision] (a [Directive], [Restart] or [Stop]): [Intensity],
//     [DefaultStrategy], and [NewFailure] to test a strategy of your own.
//   - [FuncService], the innermost service [Func] makes of a function.
//   - [ErrShutdown], [ErrNilFunc] and [MaxCapacity].
//
// Everything here is safe for concurrent use.
package actors

import (
	"log/slog"
	"time"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors/stagekit"
)

// Option configures a System.
//
// Options are plain values, safe for concurrent use.
type Option stagekit.Option

// NewSystem starts an actor system. Stop it with Shutdown.
func NewSystem(opts ...Option) *System {
	kit := make([]stagekit.Option, len(opts))
	for i, o := range opts {
		kit[i] = stagekit.Option(o)
	}
	return (*System)(stagekit.NewSystem(kit...))
}

// Default returns the process-wide system used when a stage is built with a
// nil Host. It is started on first use and never shut down; create your own
// System to control its lifetime (tests should).
func Default() *System { return (*System)(stagekit.Default()) }

// WithLogger makes the system and protoactor-go log to l. The default
// discards everything: a library should not write to stderr uninvited. A
// nil l is a configuration error (see NewSystem).
func WithLogger(l *slog.Logger) Option { return Option(stagekit.WithLogger(l)) }

// WithDroppedPermitCheck sets how long a caller may wait for a slot of a
// stage that issued permits before the stage runs the garbage collector, so
// that a permit dropped without Call or Release gives its slot back (1 s by
// default; d <= 0 turns it off). The check repeats every d while the caller
// waits.
func WithDroppedPermitCheck(d time.Duration) Option {
	return Option(stagekit.WithDroppedPermitCheck(d))
}

// WithObserver makes every stage spawned in the system report to o (see
// troupe.Observer), under the pipeline name pipeline, unless its stack has
// an observer of its own (stages.Builder.Observe). A nil o is a
// configuration error (see NewSystem).
func WithObserver(o troupe.Observer, pipeline string) Option {
	return Option(stagekit.WithObserver(o, pipeline))
}

// ErrShutdown is returned when spawning in a system or host already shut
// down.
var ErrShutdown = stagekit.ErrShutdown

// MaxCapacity is the largest capacity of a stage: 2^31-1. A stage's
// Capacity option of 0 means this: no limit of its own.
const MaxCapacity = stagekit.MaxCapacity
