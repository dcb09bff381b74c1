package statemachine

import (
	"sync"

	"pgregory.net/rapid"

	"github.com/troupe-go/troupe"
)

// pairs is an observer that checks, stage by stage, that every request a
// stage accepted finished exactly once, whatever the sequence did (a
// restart, a close, a dropped permit, a caller giving up).
type pairs struct {
	mu     sync.Mutex
	open   map[string]int // accepted and not finished, by stage; guarded by mu
	faults []string       // guarded by mu
}

func newPairs() *pairs { return &pairs{open: map[string]int{}} }

func (p *pairs) Observe(ev troupe.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch ev.Type {
	case troupe.EventAccepted:
		p.open[ev.Stage]++
	case troupe.EventFinished:
		if p.open[ev.Stage]--; p.open[ev.Stage] < 0 {
			p.faults = append(p.faults, ev.Stage+": finished a request it never accepted")
		}
	}
}

// check fails t unless every accepted request finished, once.
func (p *pairs) check(t *rapid.T) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.faults) > 0 {
		t.Fatalf("observer: %v", p.faults)
	}
	for stage, n := range p.open {
		if n != 0 {
			t.Fatalf("observer: %s accepted %d requests more than it finished", stage, n)
		}
	}
}
