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
	"github.com/troupe-go/troupe/internal/opt"
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
	// A configuration error of NewSystem's options, or nil: every spawn
	// and host in the system returns it. Set by NewSystem, then read-only.
	bad error

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
// discards everything: a library should not write to stderr uninvited. A
// nil l is a configuration error (see NewSystem).
func WithLogger(l *slog.Logger) Option {
	return func(s *System) {
		if l == nil {
			s.badOption("WithLogger's logger")
			return
		}
		s.logger = l
	}
}

// NewSystem starts an actor system. Stop it with Shutdown. A bad option (a
// nil one, or one given nil) makes a system whose Err reports it and in
// which every Build, spawn and NewHost fails with that error, matching
// troupe.ErrBadConfig: the mistake shows where the system is first used.
func NewSystem(opts ...Option) *System {
	s := &System{logger: slog.New(slog.DiscardHandler), droppedCheck: DefaultDroppedPermitCheck}
	for i, o := range opts {
		if o == nil {
			s.badOption(fmt.Sprintf("option %d of %d", i+1, len(opts)))
			continue
		}
		o(s)
	}
	s.as = actor.NewActorSystem(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger { return s.logger }))
	s.root = s.newHost("troupe", DefaultStrategy())
	s.hosts = map[*Host]uint64{s.root: 0}
	return s
}

var defaultSystem = sync.OnceValue(func() *System { return NewSystem() })

// Default returns the process-wide system, for code that has no system of
// its own to build in (a nil Host is an error). It is started on first use
// and never shut down; create your own System to control its lifetime
// (tests should).
func Default() *System { return defaultSystem() }

// badOption records the first bad option of NewSystem (what was nil).
func (s *System) badOption(what string) {
	if s.bad == nil {
		s.bad = opt.Nil("actors.NewSystem", what)
	}
}

// Err returns the configuration error of the system's options (see
// NewSystem), or nil.
func (s *System) Err() error { return s.bad }

// TroupeHost marks System as a troupe.Host.
func (s *System) TroupeHost() {}

// Host returns the system's root host.
func (s *System) Host() *Host { return s.root }

// actorSystem returns the underlying protoactor-go system (rt.ActorSystem).
func (s *System) actorSystem() *actor.ActorSystem { return s.as }

// Logger returns the system's logger.
func (s *System) Logger() *slog.Logger { return s.logger }

// ErrShutdown is returned when spawning in a system or host that was shut
// down.
var ErrShutdown = errors.New("actors: system or host shut down")

// NewHost starts a host of its own: a supervisor actor with its own
// strategy, whose stages fail, restart and stop independently of other
// hosts'.
// Package supervisor builds per-downstream pipelines on it. A nil
// strategy, an Intensity with a negative max or a window that is not
// positive, and a system with a bad option are errors matching
// troupe.ErrBadConfig.
func (s *System) NewHost(name string, strategy Strategy) (*Host, error) {
	if err := checkStrategy(strategy); err != nil {
		return nil, fmt.Errorf("actors: NewHost %s: %w", name, err)
	}
	if s.bad != nil {
		return nil, s.bad
	}
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
// a System, a Host itself, or a supervisor's. A nil host is an error
// matching troupe.ErrBadConfig (Default() is the process-wide system), as
// is a host of a system made with a bad option.
func HostFrom(h troupe.Host) (*Host, error) {
	host, err := hostFrom(h)
	if err == nil && host.sys.bad != nil {
		err = host.sys.bad
	}
	if err != nil {
		return nil, err
	}
	return host, nil
}

func hostFrom(h troupe.Host) (*Host, error) {
	switch h := h.(type) {
	case troupe.StageHost:
		return hostFrom(h.Host)
	case nil:
		return nil, &troupe.ConfigError{Stage: "actors", Option: "host", Why: "nil (actors.Default() is the process-wide system)"}
	case *System:
		if h == nil {
			return nil, &troupe.ConfigError{Stage: "actors", Option: "host", Why: "a nil *System"}
		}
		return h.root, nil
	case *Host:
		if h == nil {
			return nil, &troupe.ConfigError{Stage: "actors", Option: "host", Why: "a nil *Host"}
		}
		return h, nil
	case interface{ ActorsHost() *Host }:
		if hh := h.ActorsHost(); hh != nil {
			return hh, nil
		}
		return nil, &troupe.ConfigError{Stage: "actors", Option: "host", Value: fmt.Sprintf("%T", h), Why: "has no host"}
	}
	return nil, &troupe.ConfigError{Stage: "actors", Option: "host", Value: fmt.Sprintf("%T", h), Why: "not a host of package actors"}
}
