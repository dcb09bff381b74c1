package troupe

import (
	"fmt"
	"strconv"
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
	b   *building // shared by the layers of one Build; nil outside one
	pos int       // 1 for the outermost layer
}

// building is what the layers of one Build share: the stack's observer and
// its stages' names. (A StageHost is made for every layer and kept by
// none: it stays small, and this is made once per Build.)
type building struct {
	obs    *attached // set by Builder.Observe; nil: none. Read-only.
	mu     sync.Mutex
	stages []namedStage // the stages that took their kind's name; guarded by mu
	given  []givenName  // the names Named gave; guarded by mu
}

type namedStage struct {
	kind  string
	pos   int
	set   func(string) // nil for a stage Named named
	given string       // the name Named gave; "" when it takes its kind's
}

type givenName struct {
	pos  int
	name string
}

// givenAt returns the name Named gave the layer at pos, the innermost
// Named's when several wrap it; the caller holds mu.
func (b *building) givenAt(pos int) (string, bool) {
	for i := len(b.given) - 1; i >= 0; i-- {
		if b.given[i].pos == pos {
			return b.given[i].name, true
		}
	}
	return "", false
}

// Claim returns the name a stage of kind takes in the stack: the name
// given by Named, or kind. set is called once the stack is built if the
// name changes (a kind that appears more than once is numbered by
// position); it runs before Build returns, before any request.
func (h StageHost) Claim(kind string, set func(name string)) string {
	if h.b == nil {
		return kind
	}
	h.b.mu.Lock()
	defer h.b.mu.Unlock()
	if name, ok := h.b.givenAt(h.pos); ok {
		h.b.stages = append(h.b.stages, namedStage{kind: kind, pos: h.pos, given: name})
		return name
	}
	h.b.stages = append(h.b.stages, namedStage{kind: kind, pos: h.pos, set: set})
	return kind
}

// resolve numbers the kinds that appear more than once among the stages
// that take their kind's name, and reports a name two stages of the stack
// would share (a name Named gave twice, or one that is another stage's).
func (n *building) resolve() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	names := make([]string, len(n.stages))
	for i, s := range n.stages {
		names[i] = s.given
		if s.set == nil {
			continue
		}
		names[i] = s.kind
		for j, o := range n.stages { // a stack has a handful of stages: no map
			if j != i && o.set != nil && o.kind == s.kind {
				names[i] = fmt.Sprintf("%s-%d", s.kind, s.pos)
				break
			}
		}
	}
	for i, name := range names {
		for j := range i {
			if names[j] == name {
				return &ConfigError{Stage: "Build", Option: "Named", Value: strconv.Quote(name), Why: fmt.Sprintf("two stages (layers %d and %d) have this name", n.stages[j].pos-1, n.stages[i].pos-1)}
			}
		}
	}
	for i, s := range n.stages {
		if s.set != nil && names[i] != s.kind {
			s.set(names[i])
		}
	}
	return nil
}

// Named returns a layer that builds l's stage under name: in errors, logs
// and the stack's Stats. An empty name, or one another stage of the stack
// has, is Build's error (matching ErrBadConfig).
func Named[Req, Res any](name string, l Layer[Req, Res]) Layer[Req, Res] {
	return LayerFunc[Req, Res](func(h Host, inner Service[Req, Res]) (Service[Req, Res], error) {
		if name == "" {
			return nil, &ConfigError{Stage: "Build", Option: "Named", Why: "the name is empty"}
		}
		if l == nil {
			return nil, &ConfigError{Stage: "Build", Option: "Named", Value: strconv.Quote(name), Why: "the layer is nil"}
		}
		sh, ok := h.(StageHost)
		if !ok {
			sh = StageHost{Host: h}
		}
		if sh.b == nil { // outside a Build: a building of its own
			sh.b = &building{}
		}
		sh.b.mu.Lock()
		sh.b.given = append(sh.b.given, givenName{pos: sh.pos, name: name})
		sh.b.mu.Unlock()
		return l.Layer(sh, inner)
	})
}
