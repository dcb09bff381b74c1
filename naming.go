package troupe

import (
	"fmt"
	"sync"
)

// StageHost is the Host a Builder hands each layer: the host to spawn the
// stage in, the stage's place in the stack, which names it, and the
// observer attached to the stack, if any (see Observer). Hosts of
// package actors understand it, and troupe's stages name themselves with
// it: by their kind ("limit", "timeout", ...), numbered by position from
// the outermost ("timeout-2", "timeout-4") when a kind appears more than
// once, or as Named says. A layer that builds its stage in another layer's
// way passes it on as it is. It is safe for concurrent use.
type StageHost struct {
	Host
	names *stackNames // shared by the layers of one Build
	pos   int         // 1 for the outermost layer
	name  string      // set by Named
	obs   *attached   // set by Builder.Observe; nil: none
}

// stackNames collects the names of one Build's stages.
type stackNames struct {
	mu     sync.Mutex
	stages []namedStage // guarded by mu
}

type namedStage struct {
	kind string
	pos  int
	set  func(string)
}

// Claim returns the name a stage of kind takes in the stack: the name
// given by Named, or kind. set is called once the stack is built if the
// name changes (a kind that appears more than once is numbered by
// position); it runs before Build returns, before any request.
func (h StageHost) Claim(kind string, set func(name string)) string {
	if h.name != "" {
		return h.name
	}
	if h.names == nil {
		return kind
	}
	h.names.mu.Lock()
	defer h.names.mu.Unlock()
	h.names.stages = append(h.names.stages, namedStage{kind: kind, pos: h.pos, set: set})
	return kind
}

// resolve numbers the kinds that appear more than once.
func (n *stackNames) resolve() {
	n.mu.Lock()
	defer n.mu.Unlock()
	for i, s := range n.stages {
		if s.set == nil {
			continue
		}
		for j, o := range n.stages { // a stack has a handful of stages: no map
			if j != i && o.kind == s.kind {
				s.set(fmt.Sprintf("%s-%d", s.kind, s.pos))
				break
			}
		}
	}
}

// Named returns a layer that builds l's stage under name: in errors, logs
// and the stack's Stats.
func Named[Req, Res any](name string, l Layer[Req, Res]) Layer[Req, Res] {
	return LayerFunc[Req, Res](func(h Host, inner Service[Req, Res]) (Service[Req, Res], error) {
		sh, ok := h.(StageHost)
		if !ok {
			sh = StageHost{Host: h}
		}
		sh.name = name
		return l.Layer(sh, inner)
	})
}
