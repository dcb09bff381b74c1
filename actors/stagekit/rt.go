package stagekit

import (
	"github.com/asynkron/protoactor-go/actor"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/internal/rt"
)

func init() {
	rt.ActorSystem = func(sys any) *actor.ActorSystem {
		s, _ := sys.(*System)
		if s == nil {
			return nil
		}
		return s.actorSystem()
	}
	rt.SpawnActor = func(h any, props *actor.Props, name string, st troupe.Closer) (*actor.PID, error) {
		host, _ := h.(*Host)
		if host == nil {
			return nil, &troupe.ConfigError{Stage: "actors", Option: "host", Why: "nil"}
		}
		return host.spawnActor(props, name, st)
	}
}
