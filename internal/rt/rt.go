// Package rt reaches the runtime's protoactor-go side for the packages of
// this repository that need it (Reconnect's connection actor, the test
// kit's dead-letter check): what no public signature shows. Package
// stagekit sets its functions when it is initialised.
package rt

import (
	"github.com/asynkron/protoactor-go/actor"

	"github.com/troupe-go/troupe"
)

var (
	// ActorSystem returns the protoactor-go system of sys, a
	// *stagekit.System.
	ActorSystem func(sys any) *actor.ActorSystem
	// SpawnActor spawns props as name, a child of host h's supervisor
	// actor (h a *stagekit.Host), so that h's Strategy governs it; st is
	// closed with the host. See stagekit's spawnActor.
	SpawnActor func(h any, props *actor.Props, name string, st troupe.Closer) (*actor.PID, error)
)
