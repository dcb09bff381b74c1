package stages_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/troupe-go/troupe"
)

// recorder is an observer that keeps every event.
type recorder struct {
	mu  sync.Mutex
	evs []troupe.Event
}

func (r *recorder) Observe(ev troupe.Event) {
	r.mu.Lock()
	r.evs = append(r.evs, ev)
	r.mu.Unlock()
}

func (r *recorder) events() []troupe.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]troupe.Event(nil), r.evs...)
}

// seq renders the events of stage, in order.
func (r *recorder) seq(stage string) []string {
	var out []string
	for _, ev := range r.events() {
		if ev.Stage == stage {
			out = append(out, render(ev))
		}
	}
	return out
}

// reset forgets the events so far.
func (r *recorder) reset() {
	r.mu.Lock()
	r.evs = nil
	r.mu.Unlock()
}

func render(ev troupe.Event) string {
	switch ev.Type {
	case troupe.EventFinished:
		return "finished:" + ev.Outcome.String()
	case troupe.EventRejected:
		return "rejected:" + ev.Reason.String()
	case troupe.EventRetried, troupe.EventHedged:
		return fmt.Sprintf("%v:%d", ev.Type, ev.Attempt)
	case troupe.EventStateChanged:
		return "state:" + ev.From + ">" + ev.To
	}
	return ev.Type.String()
}

var errFlaky = errors.New("flaky")

// assertCallContexts checks that every event about one call carries the
// call's context, and the others none.
func assertCallContexts(t *testing.T, evs []troupe.Event) {
	t.Helper()
	for _, ev := range evs {
		switch ev.Type {
		case troupe.EventRejected, troupe.EventStateChanged, troupe.EventLimitChanged, troupe.EventRestarted:
			assert.Nil(t, ev.Context, "%s at %s", ev.Type, ev.Stage)
		default:
			assert.NotNil(t, ev.Context, "%s at %s", ev.Type, ev.Stage)
		}
	}
}
