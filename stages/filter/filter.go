package filter

import (
	"fmt"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors/stagekit"
	"github.com/troupe-go/troupe/internal/opt"
)

// Filter is a running filter stage with a synchronous predicate: a
// troupe.Service and a troupe.Closer. It is safe for concurrent use.
type Filter[Req, Res any] struct {
	stagekit.Handle[Req, Res]
}

// Option configures a Filter or an AsyncFilter.
//
// Options are plain values, safe for concurrent use.
type Option func(*stagekit.Config)

// Capacity sets the number of slots of the stage's mailbox. The default, 0,
// sets no limit of its own: the stage admits what the stages outside it
// admit. For an AsyncFilter it also bounds the checks running at once.
func Capacity(n int) Option { return func(c *stagekit.Config) { c.Capacity = n } }

func config(name string, opts []Option) (stagekit.Config, error) {
	cfg := stagekit.Config{Name: name}
	if err := opt.Apply(name, &cfg, opts); err != nil {
		return cfg, err
	}
	if _, err := stagekit.CheckCapacity(name, cfg.Capacity); err != nil {
		return cfg, err
	}
	return cfg, nil
}

// NewFilter spawns a filter stage over inner, in host h (nil is an error).
// predicate returns the request to hand on, or an error to reject it with;
// it runs on the stage's actor and must not block.
func NewFilter[Req, Res any](h troupe.Host, inner troupe.Service[Req, Res], predicate func(Req) (Req, error), opts ...Option) (*Filter[Req, Res], error) {
	if predicate == nil {
		return nil, opt.Nil("filter", "predicate")
	}
	cfg, err := config("filter", opts)
	if err != nil {
		return nil, err
	}
	st, err := stagekit.Spawn[Req, Res](h, cfg, inner, &syncBehavior[Req, Res]{pred: predicate})
	if err != nil {
		return nil, fmt.Errorf("filter: %w", err)
	}
	return &Filter[Req, Res]{stagekit.NewHandle(st, nil)}, nil
}

// Layer returns a layer that puts a Filter with predicate over the service
// inside it.
func Layer[Req, Res any](predicate func(Req) (Req, error), opts ...Option) troupe.Layer[Req, Res] {
	return troupe.LayerFunc[Req, Res](func(h troupe.Host, inner troupe.Service[Req, Res]) (troupe.Service[Req, Res], error) {
		return NewFilter(h, inner, predicate, opts...)
	})
}

// syncBehavior runs the predicate on each request the stage takes. It has
// no state of its own.
type syncBehavior[Req, Res any] struct {
	stagekit.Passthrough[Req, Res]
	pred func(Req) (Req, error) // never changed
}

// Request checks e and forwards it, rewritten, or answers it.
func (b *syncBehavior[Req, Res]) Request(s *stagekit.Stage[Req, Res], e *stagekit.Envelope[Req, Res]) {
	req, err := runPredicate(b.pred, e.Req)
	if err != nil {
		s.Answer(e, err)
		return
	}
	e.Req = req
	s.Forward(e)
}

// RejectReason: a rejection is ReasonFiltered (stagekit.Rejecter).
func (b *syncBehavior[Req, Res]) RejectReason(err error) troupe.Reason { return rejectReason(err) }

// runPredicate runs pred, turning a rejection into a *RejectedError and a
// panic into a *troupe.PanicError.
func runPredicate[Req any](pred func(Req) (Req, error), in Req) (Req, error) {
	var rejected error
	out, err := stagekit.Guard1("filter predicate", func() (Req, error) {
		out, err := pred(in)
		rejected = err
		return out, nil
	})
	if err == nil && rejected != nil {
		err = &RejectedError{Err: rejected}
	}
	return out, err
}
