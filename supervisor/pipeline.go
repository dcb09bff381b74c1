package supervisor

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/actors/stagekit"
	"github.com/troupe-go/troupe/backoff"
	"github.com/troupe-go/troupe/internal/opt"
)

// ErrFailed is matched by Pipeline.Err once a stage of the pipeline failed
// more often than the strategy allows and was stopped: the pipeline stopped
// retrying. The error is a *FailedError.
var ErrFailed = errors.New("supervisor: pipeline failed")

// FailedError says which pipeline failed for good, and why.
//
// A plain value, safe for concurrent use.
type FailedError struct {
	Pipeline string
	Cause    any // the last failure's reason: an error or a panic value
}

func (e *FailedError) Error() string {
	return fmt.Sprintf("supervisor: pipeline %s failed: %v", e.Pipeline, e.Cause)
}

// Is reports whether target is ErrFailed.
func (e *FailedError) Is(target error) bool { return target == ErrFailed }

// Unwrap returns the cause when it is an error.
func (e *FailedError) Unwrap() error {
	err, _ := e.Cause.(error)
	return err
}

// Build builds a pipeline's stack in host h: usually a stages.Builder's
// Build(h, leaf), with a Reconnect stage as the leaf for a remote peer.
//
// It runs once, when the pipeline is made: a failed stage is restarted in
// place by the pipeline's supervisor (its state and queued requests carried
// over), never rebuilt. A Group runs it again for a key whose pipeline
// failed for good or was closed, to make a new pipeline.
type Build[Req, Res any] func(h troupe.Host) (troupe.Service[Req, Res], error)

// Option configures a Pipeline.
//
// Options are plain values, safe for concurrent use.
type Option func(*config)

type config struct {
	delays      backoff.Exponential
	maxRestarts int
	window      time.Duration
}

// WithBackoff sets the pipeline's restart delays and intensity: more than
// maxRestarts failures of one stage within window stop it.
func WithBackoff(delays backoff.Exponential, maxRestarts int, window time.Duration) Option {
	return func(c *config) { c.delays, c.maxRestarts, c.window = delays, maxRestarts, window }
}

// Pipeline is one supervised pipeline: a host of its own and the stack
// built in it. It is a troupe.Service and a troupe.Closer, safe for
// concurrent use.
type Pipeline[Req, Res any] struct {
	troupe.Service[Req, Res]
	name     string
	host     *actors.Host
	strategy *Backoff

	mu     sync.Mutex
	err    error         // set once, when a stage is stopped for failing; guarded by mu
	failed chan struct{} // closed with err
	closed atomic.Bool   // Close was called
}

// New starts a pipeline named name in sys: a host with the pipeline's
// strategy, and the stack build makes in it. A nil sys, build or option,
// and a bad backoff, are errors matching troupe.ErrBadConfig.
func New[Req, Res any](sys *actors.System, name string, build Build[Req, Res], opts ...Option) (*Pipeline[Req, Res], error) {
	switch {
	case sys == nil:
		return nil, opt.Nil("supervisor.New", "the system")
	case build == nil:
		return nil, opt.Nil("supervisor.New", "the build function")
	}
	d := DefaultBackoff()
	c := config{delays: d.Delays, maxRestarts: d.MaxRestarts, window: d.Window}
	if err := opt.Apply("supervisor.New", &c, opts); err != nil {
		return nil, err
	}
	strategy, err := NewBackoff(c.delays, c.maxRestarts, c.window)
	if err != nil {
		return nil, err
	}
	p := &Pipeline[Req, Res]{name: name, strategy: strategy, failed: make(chan struct{})}
	strategy.onStop = p.fail
	host, err := sys.NewHost(name, strategy)
	if err != nil {
		return nil, err
	}
	p.host = host
	svc, err := build(host)
	if err != nil {
		_ = host.Close(context.Background())
		return nil, fmt.Errorf("supervisor: building pipeline %s: %w", name, err)
	}
	p.Service = svc
	return p, nil
}

func (p *Pipeline[Req, Res]) fail(f actors.Failure) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err == nil {
		p.err = &FailedError{Pipeline: p.name, Cause: f.Reason}
		close(p.failed)
	}
}

// Name returns the pipeline's name.
func (p *Pipeline[Req, Res]) Name() string { return p.name }

// ActorsHost returns the stage kit's view of the pipeline's host, which the
// stages built with the pipeline as their troupe.Host use (stagekit.HostFrom).
func (p *Pipeline[Req, Res]) ActorsHost() *stagekit.Host { return p.host.ActorsHost() }

// TroupeHost marks a Pipeline as a troupe.Host: layers built with it spawn
// their stages in the pipeline's host.
func (p *Pipeline[Req, Res]) TroupeHost() {}

// Failed is closed when the pipeline failed for good (see Err).
func (p *Pipeline[Req, Res]) Failed() <-chan struct{} { return p.failed }

// Err returns nil, or the *FailedError of a pipeline that failed for good.
func (p *Pipeline[Req, Res]) Err() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

// Stats counts what the pipeline's supervisor decided.
//
// A plain value, safe for concurrent use.
type Stats struct {
	Restarts int64 // stage restarts
	Stops    int64 // stages stopped for failing too often
}

// Stats returns the pipeline's counters.
func (p *Pipeline[Req, Res]) Stats() Stats {
	return Stats{Restarts: p.strategy.Restarts(), Stops: p.strategy.Stops()}
}

// Close closes the pipeline's stages, outermost first, then its host; see
// troupe.Closer.
func (p *Pipeline[Req, Res]) Close(ctx context.Context) error {
	p.closed.Store(true)
	return p.host.Close(ctx)
}

// ended reports whether the pipeline failed for good or was closed.
func (p *Pipeline[Req, Res]) ended() bool {
	select {
	case <-p.failed:
		return true
	default:
		return p.closed.Load()
	}
}

// ReserveAndCall reserves and calls in one step (troupe.Do uses it).
func (p *Pipeline[Req, Res]) ReserveAndCall(ctx context.Context, req Req) (Res, error) {
	return troupe.Do(ctx, p.Service, req)
}
