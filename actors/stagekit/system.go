package stagekit

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/troupe-go/troupe"
)

// System is an actor system for troupe's stages: a protoactor-go actor
// system whose logging is quiet unless a logger is given, and a root Host.
// A System is a troupe.Host: layers built with it spawn their stages in its
// root host. It is safe for concurrent use.
type System struct {
	as     *actor.ActorSystem
	logger *slog.Logger
	root   *Host
	// How long a caller waits for a slot before a stage reclaims dropped
	// permits; set by the options, then read-only.
	droppedCheck time.Duration
	// The observer every stage reports to unless its stack has its own,
	// and its pipeline name; set by WithObserver, then read-only.
	observer troupe.Observer
	pipeline string

	mu     sync.Mutex
	hosts  map[*Host]uint64 // hosts not closed yet, by creation order (root first); guarded by mu
	seq    uint64           // host counter; guarded by mu
	closed bool             // guarded by mu
}

// Option configures a System.
//
// Options are plain values, safe for concurrent use.
type Option func(*System)

// WithLogger makes the system and protoactor-go log to l. The default
// discards everything: a library should not write to stderr uninvited.
func WithLogger(l *slog.Logger) Option { return func(s *System) { s.logger = l } }

// NewSystem starts an actor system. Stop it with Shutdown.
func NewSystem(opts ...Option) *System {
	s := &System{logger: slog.New(slog.DiscardHandler), droppedCheck: DefaultDroppedPermitCheck}
	for _, o := range opts {
		o(s)
	}
	s.as = actor.NewActorSystem(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger { return s.logger }))
	s.root = s.newHost("troupe", DefaultStrategy())
	s.hosts = map[*Host]uint64{s.root: 0}
	return s
}

var defaultSystem = sync.OnceValue(func() *System { return NewSystem() })

// Default returns the process-wide system used when a layer is built with a
// nil Host. It is started on first use and never shut down; create your own
// System to control its lifetime (tests should).
func Default() *System { return defaultSystem() }

// TroupeHost marks System as a troupe.Host.
func (s *System) TroupeHost() {}

// Host returns the system's root host.
func (s *System) Host() *Host { return s.root }

// ActorSystem returns the underlying protoactor-go system.
func (s *System) ActorSystem() *actor.ActorSystem { return s.as }

// Logger returns the system's logger.
func (s *System) Logger() *slog.Logger { return s.logger }

// ErrShutdown is returned when spawning in a system or host that was shut
// down.
var ErrShutdown = errors.New("actors: system or host shut down")

// NewHost starts a host of its own: a supervisor actor with its own
// strategy, whose stages fail, restart and stop independently of other
// hosts'.
// Package supervisor builds per-downstream pipelines on it.
func (s *System) NewHost(name string, strategy Strategy) (*Host, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, ErrShutdown
	}
	h := s.newHost(name, strategy)
	s.seq++
	s.hosts[h] = s.seq
	return h, nil
}

// Shutdown closes every stage of every host (most recent first, each given
// the chance to drain until ctx is done) and stops the system. Later calls
// do nothing.
func (s *System) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	hosts := bySpawn(s.hosts)
	s.mu.Unlock()
	var errs []error
	for _, h := range hosts {
		errs = append(errs, h.Close(ctx))
	}
	s.as.Shutdown()
	return errors.Join(errs...)
}

// forgetHost drops a closed host, so that closing a pipeline returns its
// memory.
func (s *System) forgetHost(h *Host) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.hosts, h)
}

// HostFrom returns the actors Host behind a troupe.Host: the root host of
// a System, a Host itself, or the Default system's root host for nil.
func HostFrom(h troupe.Host) (*Host, error) {
	switch h := h.(type) {
	case troupe.StageHost:
		if h.Host == nil {
			return Default().root, nil
		}
		return HostFrom(h.Host)
	case nil:
		return Default().root, nil
	case *System:
		if h == nil {
			return nil, fmt.Errorf("actors: nil *System: %w", ErrBadConfig)
		}
		return h.root, nil
	case *Host:
		if h == nil {
			return nil, fmt.Errorf("actors: nil *Host: %w", ErrBadConfig)
		}
		return h, nil
	case interface{ ActorsHost() *Host }:
		if hh := h.ActorsHost(); hh != nil {
			return hh, nil
		}
		return nil, fmt.Errorf("actors: %T has no host: %w", h, ErrBadConfig)
	}
	return nil, fmt.Errorf("actors: %T is not a host of package actors: %w", h, ErrBadConfig)
}
