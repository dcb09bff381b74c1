package troupe

import (
	"context"
	"errors"
	"fmt"
	"slices"
)

// Host runs the stage actors of a stack. [Builder.Build] hands the host to
// every layer, and a layer spawns its stage in it. Hosts come from package
// actors (an actor system) and package supervisor (one supervised pipeline
// per downstream); troupe itself never looks inside one, and a layer that
// spawns nothing just passes it on. A nil Host is a configuration error
// (Build's); package actors' Default is the process-wide system.
//
// Implementations must be safe for concurrent use.
type Host interface {
	// TroupeHost marks a Host; it does nothing.
	TroupeHost()
}

// Layer wraps a service in a stage. Layers are values: building a stack from
// them spawns the stages, and the same layer can build many stacks.
//
// A Layer may build many stacks at once: implementations must be safe for concurrent use.
type Layer[Req, Res any] interface {
	// Layer returns a service that runs this layer's stage in h over inner.
	// A bad configuration is an error here, never a panic.
	Layer(h Host, inner Service[Req, Res]) (Service[Req, Res], error)
}

// LayerFunc adapts a function to a Layer.
//
// Safe for concurrent use when f is.
type LayerFunc[Req, Res any] func(h Host, inner Service[Req, Res]) (Service[Req, Res], error)

// Layer calls f.
func (f LayerFunc[Req, Res]) Layer(h Host, inner Service[Req, Res]) (Service[Req, Res], error) {
	return f(h, inner)
}

// Builder stacks layers of any kind: the untyped machinery that
// stages.Builder is made of, for authors of layers and of stack builders of
// their own. A user builds a stack with stages.Stack, which has a method per
// stage and takes any other layer with its Layer method.
//
// The first layer added is the outermost: it sees a request first and its
// outcome last. A Builder is immutable: Layer returns a new Builder, so a
// partial builder can be shared and extended. It is safe for concurrent use.
type Builder[Req, Res any] struct {
	layers []Layer[Req, Res]
	obs    *attached // set by Observe; nil: none
}

// NewBuilder returns an empty builder (see Builder: users start a stack
// with stages.Stack instead).
func NewBuilder[Req, Res any]() Builder[Req, Res] { return Builder[Req, Res]{} }

// Layer returns a builder with l added inside the layers added before it.
func (b Builder[Req, Res]) Layer(l Layer[Req, Res]) Builder[Req, Res] {
	b.layers = append(slices.Clip(b.layers), l)
	return b
}

// Named returns a builder whose layer added last builds its stage under
// name (see Named): in errors, logs and the stack's Stats. With no layer
// added yet it returns b as it is. An empty name, or one another stage of
// the stack has, is Build's error.
func (b Builder[Req, Res]) Named(name string) Builder[Req, Res] {
	if len(b.layers) == 0 {
		return b
	}
	ls := slices.Clone(b.layers)
	ls[len(ls)-1] = Named(name, ls[len(ls)-1])
	b.layers = ls
	return b
}

// Build spawns the stages in h over inner, innermost first, and returns the
// stack. An inner service with a Validate() error method (actors.Func has
// one) is validated first. When a layer fails, the stages already built are closed and the
// error is returned. The stack does not own inner: closing the stack leaves
// inner alone. A nil h or inner is an error matching ErrBadConfig.
func (b Builder[Req, Res]) Build(h Host, inner Service[Req, Res]) (*Stack[Req, Res], error) {
	if h == nil {
		return nil, &ConfigError{Stage: "Build", Option: "host", Why: "nil (package actors' Default is the process-wide system)"}
	}
	if inner == nil {
		return nil, &ConfigError{Stage: "Build", Option: "inner service", Why: "nil"}
	}
	if b.obs != nil && b.obs.o == nil {
		return nil, &ConfigError{Stage: "Build", Option: "Observe", Why: "the observer is nil"}
	}
	if v, ok := inner.(interface{ Validate() error }); ok {
		if err := v.Validate(); err != nil {
			return nil, fmt.Errorf("troupe: Build: inner service: %w", err)
		}
	}
	st := &Stack[Req, Res]{Service: inner, made: make([]Service[Req, Res], 0, len(b.layers))}
	bld := &building{obs: b.obs, stages: make([]namedStage, 0, len(b.layers))}
	for i := len(b.layers) - 1; i >= 0; i-- {
		if b.layers[i] == nil {
			_ = st.Close(context.Background())
			return nil, &ConfigError{Stage: "Build", Option: fmt.Sprintf("layer %d", i), Why: "nil"}
		}
		svc, err := b.layers[i].Layer(StageHost{Host: h, b: bld, pos: i + 1}, st.Service)
		if err != nil {
			_ = st.Close(context.Background())
			return nil, err
		}
		if svc == nil {
			_ = st.Close(context.Background())
			return nil, &ConfigError{Stage: "Build", Option: fmt.Sprintf("layer %d", i), Why: "returned a nil service"}
		}
		st.Service = svc
		st.made = append(st.made, svc)
	}
	if err := bld.resolve(); err != nil {
		_ = st.Close(context.Background())
		return nil, err
	}
	if o, ok := st.Service.(reserveAndCaller[Req, Res]); ok {
		st.call = o.ReserveAndCall // looked up once, not on every call
	}
	return st, nil
}

// Stack is a built stack of stages: a Service whose Close stops its stages,
// outermost first so that each drains into a still-running inner stage.
// It is safe for concurrent use.
type Stack[Req, Res any] struct {
	Service[Req, Res]
	// What the layers made, innermost first: its stages are the Closers
	// and StageInfos among them (one slice, not one of each: an idle
	// pipeline is mostly its stages' bytes). Set by Build, then read-only.
	made []Service[Req, Res]
	// The outermost service's ReserveAndCall, if it has one; set by Build.
	call func(context.Context, Req) (Res, error)
}

// ReserveAndCall reserves and calls in one step (see Do).
func (s *Stack[Req, Res]) ReserveAndCall(ctx context.Context, req Req) (Res, error) {
	if s.call != nil {
		return s.call(ctx, req)
	}
	return Do(ctx, s.Service, req)
}

// Close closes the stack's stages, outermost first, and returns the errors
// they reported, joined. See [Closer] for what closing a stage means.
func (s *Stack[Req, Res]) Close(ctx context.Context) error {
	var errs []error
	for i := len(s.made) - 1; i >= 0; i-- {
		if c, ok := s.made[i].(Closer); ok {
			errs = append(errs, c.Close(ctx))
		}
	}
	return errors.Join(errs...)
}

// Stats returns the snapshot of the stage named name (see StageHost for how
// a stack's stages are named), and whether the stack has one.
func (s *Stack[Req, Res]) Stats(name string) (Stats, bool) {
	for _, svc := range s.made {
		if si, ok := svc.(StageInfo); ok && si.Name() == name {
			return si.Stats(), true
		}
	}
	return Stats{}, false
}

// Stages returns a snapshot of every stage of the stack, outermost first.
func (s *Stack[Req, Res]) Stages() []Stats {
	out := make([]Stats, 0, len(s.made))
	for i := len(s.made) - 1; i >= 0; i-- {
		if si, ok := s.made[i].(StageInfo); ok {
			out = append(out, si.Stats())
		}
	}
	return out
}
