package actors

import (
	"context"

	"github.com/troupe-go/troupe/actors/stagekit"
)

// Host is a supervisor actor and the stages spawned under it: stages are
// its children, so its [Strategy] decides what happens when one fails. A
// Host is a troupe.Host: a stack built with it spawns its stages in it. Make
// one with [System.NewHost] (package supervisor makes one per pipeline).
//
// Safe for concurrent use.
type Host stagekit.Host

func (h *Host) kit() *stagekit.Host { return (*stagekit.Host)(h) }

// TroupeHost marks Host as a troupe.Host.
func (h *Host) TroupeHost() {}

// ActorsHost returns the stage kit's view of h, which the stages spawned in
// h use (stagekit.HostFrom); nil for a nil h.
func (h *Host) ActorsHost() *stagekit.Host { return h.kit() }

// System returns the system h belongs to.
func (h *Host) System() *System { return (*System)(h.kit().System()) }

// Name returns the host's name.
func (h *Host) Name() string { return h.kit().Name() }

// Close closes every stage of h, the most recently spawned (outermost)
// first, each given the chance to drain until ctx is done, then stops the
// supervisor actor. Later spawns fail with ErrShutdown; later calls do
// nothing.
func (h *Host) Close(ctx context.Context) error { return h.kit().Close(ctx) }
