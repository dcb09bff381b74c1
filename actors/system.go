package actors

import (
	"context"
	"log/slog"

	"github.com/troupe-go/troupe/actors/stagekit"
)

// System is an actor system for troupe's stages: a protoactor-go actor
// system whose logging is quiet unless a logger is given, and a root
// [Host]. A System is a troupe.Host: a stack built with it spawns its stages
// in its root host. Make one with [NewSystem] and stop it with
// [System.Shutdown].
//
// Safe for concurrent use.
type System stagekit.System

func (s *System) kit() *stagekit.System { return (*stagekit.System)(s) }

// TroupeHost marks System as a troupe.Host.
func (s *System) TroupeHost() {}

// ActorsHost returns the stage kit's view of the system's root host, which
// the stages spawned in s use (stagekit.HostFrom); nil for a nil s.
func (s *System) ActorsHost() *stagekit.Host {
	if s == nil {
		return nil
	}
	return s.kit().Host()
}

// Host returns the system's root host: the one stacks built with the system
// itself spawn their stages in.
func (s *System) Host() *Host { return (*Host)(s.kit().Host()) }

// NewHost starts a host of its own: a supervisor actor with its own
// strategy, whose stages fail, restart and stop independently of other
// hosts'. Package supervisor builds per-downstream pipelines on it. After
// Shutdown it returns ErrShutdown.
func (s *System) NewHost(name string, strategy Strategy) (*Host, error) {
	h, err := s.kit().NewHost(name, kitStrategy(strategy))
	return (*Host)(h), err
}

// Shutdown closes every stage of every host (most recent first, each given
// the chance to drain until ctx is done) and stops the system. It returns
// what closing the stages returned, joined (a *troupe.AbandonedError for
// the calls given up on when ctx ended first). Later calls do nothing.
func (s *System) Shutdown(ctx context.Context) error { return s.kit().Shutdown(ctx) }

// Logger returns the system's logger (see WithLogger).
func (s *System) Logger() *slog.Logger { return s.kit().Logger() }
