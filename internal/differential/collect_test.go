package differential

import (
	"runtime"
	"testing"
	"testing/synctest"
	"time"
	"weak"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/actors/stagekit"
	"github.com/troupe-go/troupe/internal/rt"
	"pgregory.net/rapid"
)

// watchSystem, when set, is given every system runReal makes.
var watchSystem func(*actors.System)

// collected reports, after as many collections as the cleanups of the
// contexts involved need, which of ws the collector has not freed.
func collected(ws []weak.Pointer[actor.ActorSystem]) (alive []int) {
	for range 10 {
		runtime.GC()
		alive = alive[:0]
		for i, w := range ws {
			if w.Value() != nil {
				alive = append(alive, i)
			}
		}
		if len(alive) == 0 {
			return nil
		}
	}
	return alive
}

// A system that ran a stack is freed once it is shut down and nobody holds
// it: no context the stages made for their calls keeps it (a context's link
// to its parent is undone by the collector, and nothing the link holds may
// reach back to the context). A Timeout's call context pointed into its
// stage, so a Timeout over a Hedge whose hedge won kept every such system,
// 2.8 MB each, for the life of the process.
//
// spec: EG13
func TestASystemThatRanAStackIsFreedOnceShutDown(t *testing.T) {
	var ws []weak.Pointer[actor.ActorSystem]
	watchSystem = func(s *actors.System) { ws = append(ws, weak.Make(rt.ActorSystem((*stagekit.System)(s)))) }
	defer func() { watchSystem = nil }()

	var scripts []*script
	hedgeWins := &script{
		layers:  []layer{{kind: "timeout", d: 50 * time.Millisecond}, {kind: "hedge", d: 2 * time.Millisecond}},
		callers: []arrival{{at: 0}},
		steps:   map[[2]int]step{{0, 0}: {lat: 20 * time.Millisecond}, {0, 1}: {lat: 3 * time.Millisecond}},
	}
	for range 3 {
		scripts = append(scripts, hedgeWins)
		synctest.Test(t, func(bt *testing.T) {
			if _, err := runReal(bt, hedgeWins); err != nil {
				bt.Fatal(err)
			}
		})
	}
	setChecks(t, 200)
	rapid.Check(t, func(rt *rapid.T) {
		sc := drawScript(rt)
		scripts = append(scripts, sc)
		synctest.Test(t, func(bt *testing.T) { _, _ = runReal(bt, sc) })
	})
	if len(ws) != len(scripts) {
		t.Fatalf("%d systems for %d scripts", len(ws), len(scripts))
	}
	alive := collected(ws)
	for i, n := range alive {
		if i == 5 {
			break
		}
		t.Errorf("the system of this script is still reachable:\n%s", scripts[n])
	}
	if len(alive) > 0 {
		t.Errorf("%d of %d systems still reachable after shutdown", len(alive), len(ws))
	}
}
