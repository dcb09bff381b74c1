package statemachine

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
)

// drops counts the permits the garbage collector reclaimed, by who issued
// them: a stage of the sequence's system reports its own through the
// system's logger (naming the stage), the plain leaf through its
// PermitDropped. The test drops only permits of the outermost stage (or
// LoadShed's shed permits, which hold nothing and are reported through
// slog.Default): any other is a permit the library dropped itself.
type drops struct {
	mu      sync.Mutex
	byStage map[string]int // guarded by mu
	plain   int            // guarded by mu
}

func (d *drops) String() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return fmt.Sprintf("by stage %v, of the plain service %d", d.byStage, d.plain)
}

// handler is the sequence's system's slog.Handler: it counts the dropped
// permits its stages report and discards everything else.
type handler struct{ d *drops }

func (h handler) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelWarn }

func (h handler) Handle(_ context.Context, r slog.Record) error {
	if !strings.Contains(r.Message, "permit dropped") {
		return nil
	}
	stage := "?"
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "stage" {
			stage = a.Value.String()
		}
		return true
	})
	h.d.mu.Lock()
	defer h.d.mu.Unlock()
	if h.d.byStage == nil {
		h.d.byStage = map[string]int{}
	}
	h.d.byStage[stage]++
	return nil
}

func (h handler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h handler) WithGroup(string) slog.Handler      { return h }

// PermitDropped reports a permit of the plain leaf that was dropped: only
// the stages over it hold such permits (troupe.DroppedReporter).
func (p *plainLeaf) PermitDropped() {
	p.w.drops.mu.Lock()
	defer p.w.drops.mu.Unlock()
	p.w.drops.plain++
}

// libraryDrops describes the permits the library dropped, or is empty.
func (d *drops) libraryDrops(outer string) string {
	d.mu.Lock()
	defer d.mu.Unlock()
	var b strings.Builder
	for stage, n := range d.byStage {
		if stage != outer {
			fmt.Fprintf(&b, " %d of stage %s;", n, stage)
		}
	}
	if d.plain > 0 {
		fmt.Fprintf(&b, " %d of the plain service;", d.plain)
	}
	return b.String()
}
