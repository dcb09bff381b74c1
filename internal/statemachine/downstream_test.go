package statemachine

import (
	"context"
	"fmt"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/stages/reconnect"
	"github.com/troupe-go/troupe/troupetest"
)

// dial is the Reconnect's connector.
func (w *world) dial(ctx context.Context, _ int) (troupe.Service[req, int], error) {
	w.mu.Lock()
	mode := w.nextDial
	w.nextDial = dialOK
	if w.draining {
		mode = dialOK
	}
	w.mu.Unlock()
	switch mode {
	case dialFail:
		return nil, errDial
	case dialPanic:
		panic("statemachine: dial panics")
	case dialBlock:
		if err := w.block(ctx, "dial", -1); err != nil {
			return nil, fmt.Errorf("%w: %w", errDial, err)
		}
	}
	return w.conn, nil
}

// onChange is the Reconnect's state callback.
func (w *world) onChange(from, to reconnect.State) {
	if w.panicOnChange.CompareAndSwap(true, false) {
		panic(fmt.Sprintf("statemachine: state callback panics on %v -> %v", from, to))
	}
}

// pump plays the downstream for the troupetest mock: it takes the requests
// the mock receives and answers them as their script says.
func (w *world) pump(ctx context.Context, h *troupetest.Handle[req, int]) {
	defer close(w.pumpDone)
	for {
		r := h.Next(ctx)
		if r == nil {
			return
		}
		w.arrive(r.Value)
		id := r.Value.ID
		switch r.Value.Leaf {
		case leafOK:
			r.Respond(want(id))
		case leafFail, leafPanic:
			r.Fail(errDownstream)
		case leafBlock:
			b := &blocked{what: "leaf", id: id, ctx: r.Ctx, answer: func(ok bool) {
				if ok {
					r.Respond(want(id))
				} else {
					r.Fail(errDownstream)
				}
			}}
			if !w.enqueue(b) {
				r.Respond(want(id))
			}
		}
	}
}
