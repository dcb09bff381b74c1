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
// Everything here is safe for concurrent use.
package actors

import (
	"context"
	"log/slog"
	"time"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors/stagekit"
)

// System is an actor system for troupe's stages; see stagekit.System. Stop
// it with Shutdown.
//
// Safe for concurrent use.
type System = stagekit.System

// Host is a supervisor actor and the stages spawned under it (System.NewHost;
// package supervisor makes one per pipeline).
//
// Implementations must be safe for concurrent use.
type Host = stagekit.Host

// Option configures a System.
//
// Options are plain values, safe for concurrent use.
type Option = stagekit.Option

// NewSystem starts an actor system. Stop it with Shutdown.
func NewSystem(opts ...Option) *System { return stagekit.NewSystem(opts...) }

// Default returns the process-wide system used when a stage is built with a
// nil Host. It is started on first use and never shut down; create your own
// System to control its lifetime (tests should).
func Default() *System { return stagekit.Default() }

// WithLogger makes the system and protoactor-go log to l. The default
// discards everything: a library should not write to stderr uninvited. A
// nil l is a configuration error (see NewSystem).
func WithLogger(l *slog.Logger) Option { return stagekit.WithLogger(l) }

// WithDroppedPermitCheck sets how long a caller may wait for a slot of a
// stage that issued permits before the stage runs the garbage collector, so
// that a permit dropped without Call or Release gives its slot back (1 s by
// default; d <= 0 turns it off).
func WithDroppedPermitCheck(d time.Duration) Option { return stagekit.WithDroppedPermitCheck(d) }

// WithObserver makes every stage spawned in the system report to o (see
// troupe.Observer), under the pipeline name pipeline, unless its stack has
// an observer of its own (Observe on a builder). A nil o is a configuration
// error (see NewSystem).
func WithObserver(o troupe.Observer, pipeline string) Option {
	return stagekit.WithObserver(o, pipeline)
}

// ErrShutdown is returned when spawning in a system or host already shut
// down.
var ErrShutdown = stagekit.ErrShutdown

// MaxCapacity is the largest capacity of a stage: 2^31-1. A stage's
// Capacity option of 0 means this: no limit of its own.
const MaxCapacity = stagekit.MaxCapacity

// FuncService is the innermost service made from a plain function; see Func.
//
// Safe for concurrent use.
type FuncService[Req, Res any] = stagekit.FuncService[Req, Res]

// Func returns the service that calls fn on the goroutine of the caller that
// made the request (it may block; it should honour its context). name,
// when given, names it in errors. A panic in fn is an outcome
// (troupe.ErrPanic); a nil fn is an error from Build.
func Func[Req, Res any](fn func(context.Context, Req) (Res, error), name ...string) *FuncService[Req, Res] {
	return stagekit.Func(fn, name...)
}

// ErrNilFunc matches the error of a FuncService made from a nil function.
var ErrNilFunc = stagekit.ErrNilFunc

// Strategy decides the fate of a host's failed stages (see System.NewHost
// and package supervisor).
//
// A Strategy shared by several hosts must be safe for concurrent use.
type Strategy = stagekit.Strategy

// Failure is one failure of a stage, as a Strategy sees it.
//
// A value, safe for concurrent use.
type Failure = stagekit.Failure

// Decision is a Strategy's verdict on one failure.
//
// A plain value, safe for concurrent use.
type Decision = stagekit.Decision

// Directive is what a Strategy decides for a failed stage.
//
// A plain value, safe for concurrent use.
type Directive = stagekit.Directive

// The directives.
const (
	Restart = stagekit.Restart // restart the stage, now or after Decision.Delay
	Stop    = stagekit.Stop    // stop it for good
)

// NewFailure returns a Failure, for testing a Strategy.
func NewFailure(stage string, reason any, times ...time.Time) Failure {
	return stagekit.NewFailure(stage, reason, times...)
}

// Intensity returns a Strategy that restarts a failed stage at once, unless
// it failed more than max times within window, and stops it then.
func Intensity(max int, window time.Duration) Strategy { return stagekit.Intensity(max, window) }

// DefaultStrategy is the root host's: restart, unless a stage failed more
// than 10 times in 10 seconds.
func DefaultStrategy() Strategy { return stagekit.DefaultStrategy() }
