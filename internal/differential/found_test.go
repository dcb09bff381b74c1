package differential

import (
	"slices"
	"testing"
	"testing/synctest"
)

// Scripts in which troupe and the model once disagreed, kept as they were
// shrunk, each naming which side was wrong and what changed.
var found = []struct {
	name string
	sc   *script
}{
	// The model was wrong: a stage with more work waiting hands requests
	// on once it has finished the message it is on (mailbox.PostFrom).
	{"a busy retry hands its attempt on after its message", &script{
		layers:  []layer{{kind: "timeout", d: 20000940}, {kind: "retry", n: 2}, {kind: "limit", n: 1}, {kind: "limit", n: 1}, {kind: "filter"}},
		callers: []arrival{{at: 883}, {at: 712}, {at: 1541}, {at: 1427}},
		steps: map[[2]int]step{
			{0, 0}: {lat: 500826, stubborn: true}, {0, 1}: {lat: 500769, stubborn: true},
			{1, 0}: {lat: 500655, stubborn: true}, {1, 1}: {lat: 500598, stubborn: true},
			{2, 0}: {lat: 500484, stubborn: true}, {3, 0}: {lat: 500370, stubborn: true},
		},
	}},
	// The model was wrong: a hedge session that ends leaves the line for a unit.
	{"an ended hedge session leaves the line", &script{
		layers:  []layer{{kind: "limit", n: 2}, {kind: "limit", n: 2}, {kind: "hedge", d: 1000940}, {kind: "limit", n: 1}, {kind: "retry", n: 1}},
		callers: []arrival{{at: 883}, {at: 769}, {at: 1598}},
		steps: map[[2]int]step{
			{0, 0}: {lat: 500826, kind: stepErr, stubborn: true},
			{1, 0}: {lat: 15614712, stubborn: true}, {1, 1}: {lat: 500655, stubborn: true},
			{2, 0}: {lat: 500541, stubborn: true},
		},
	}},
	// The model was wrong: a context's end reaches its children at once.
	{"a parked hedge whose caller's deadline passed is not sent", &script{
		layers:  []layer{{kind: "hedge", d: 1000940}, {kind: "limit", n: 2}, {kind: "limit", n: 1}},
		callers: []arrival{{at: 2984883}, {at: 72769, deadline: 9498712}},
		steps:   map[[2]int]step{{0, 0}: {lat: 51786826}, {1, 0}: {lat: 17065655}, {1, 1}: {lat: 141743598}},
	}},
	// troupe was wrong: a Fallback outside a Timeout in Abandon mode never
	// ran its function (Frame.Origin).
	{"a fallback outside an abandoning timeout runs", &script{
		layers:  []layer{{kind: "fallback"}, {kind: "abandon", d: 20000940}},
		callers: []arrival{{at: 883}},
		steps:   map[[2]int]step{{0, 0}: {lat: 500826, kind: stepErr, stubborn: true}},
	}},
	// troupe was wrong: a Limit outside a Hedge freed its slot while the
	// lost original still ran (a hedged original forces outcomes).
	{"a limit counts a hedge's lost original", &script{
		layers:  []layer{{kind: "limit", n: 1}, {kind: "limit", n: 1}, {kind: "hedge", d: 1000940}, {kind: "filter"}, {kind: "fallback"}},
		callers: []arrival{{at: 883}, {at: 1712}},
		steps: map[[2]int]step{
			{0, 0}: {lat: 1552826, stubborn: true}, {0, 1}: {lat: 500769, stubborn: true},
			{1, 0}: {lat: 500655, stubborn: true},
		},
	}},
	// troupe was wrong: two retry sessions whose backoffs ended at one
	// instant went in heap order, not in the order they began to wait.
	{"retry waits that end at one instant go first come first served", &script{
		layers: []layer{{kind: "breaker", n: 1, min: 1, k: 1, d: 5000940}, {kind: "retry", n: 1, d: 5003883}, {kind: "limit", n: 1},
			{kind: "breaker", n: 2, min: 2, k: 1, d: 5000826}, {kind: "limit", n: 1}},
		callers: []arrival{{at: 495769}, {at: 484, deadline: 5000427}, {at: 1256}, {at: 496085}},
		steps: map[[2]int]step{
			{0, 0}: {lat: 500712, stubborn: true}, {1, 0}: {lat: 500370, stubborn: true},
			{2, 0}: {lat: 687199, kind: stepErr, stubborn: true}, {2, 1}: {lat: 500142, stubborn: true},
			{3, 0}: {lat: 500028, stubborn: true},
		},
	}},
	// troupe was wrong: a request crossed a rate limit on its caller's
	// goroutine while the rate limit's actor was still unwinding the
	// outcome of the request before it, so two retry sessions' waits began
	// in the wrong order (the caller's path now closes while the actor runs).
	{"a request waits for the stage's actor to finish its message", &script{
		layers: []layer{{kind: "retry", n: 2, d: 1000940}, {kind: "limit", n: 1}, {kind: "limit", n: 1},
			{kind: "ratelimit", n: 3, d: 20000883}, {kind: "breaker", n: 1, min: 1, k: 1, d: 19000826}},
		callers: []arrival{{at: 769}, {at: 484}, {at: 370}},
		steps: map[[2]int]step{
			{0, 0}: {lat: 500712, stubborn: true}, {0, 1}: {lat: 500655, stubborn: true},
			{0, 2}: {lat: 500598, stubborn: true}, {0, 3}: {lat: 500541, stubborn: true},
			{1, 0}: {lat: 500427, kind: stepErr, stubborn: true},
			{2, 0}: {lat: 500313, stubborn: true},
		},
	}},
	// The model was wrong: below a SpawnReady over the downstream, the
	// permit's call is the downstream's function itself, whose outcome goes
	// up as it is (a success of stubborn work that outlived its caller's
	// deadline), not a call of its own whose root frame turns it into the
	// context's error. A breaker above counts that success (caller 1's),
	// then caller 0's error opens it (1 of 2 failed), and caller 2 is
	// refused.
	{"a spawnready over the downstream hands up a late success as it is", &script{
		layers:  []layer{{kind: "limit", n: 1}, {kind: "breaker", n: 2, min: 2, k: 1, d: 5000940}, {kind: "spawnready", n: 1}},
		callers: []arrival{{at: 883}, {at: 541, deadline: 5000484}, {at: 1313}},
		steps: map[[2]int]step{
			{0, 0}: {lat: 500826, kind: stepErr, stubborn: true},
			{1, 0}: {lat: 122653427, stubborn: true},
			{2, 0}: {lat: 500256, stubborn: true},
		},
	}},
	// troupe was wrong: behind troupehttp.Handler, caller 4's handler gave
	// up when its client's deadline passed, writing nothing, and Serve
	// reported a 200, which the breaker counted a success; caller 0's 500
	// then made one failure of two in its window and opened it, so
	// callers 1 and 2 got 503s. The handler's give-up is the context's
	// error now, which a breaker does not count.
	{"a handler that gave up on a gone client is no success to a breaker", &script{
		http:    true,
		layers:  []layer{{kind: "filter"}, {kind: "limit", n: 1}, {kind: "breaker", n: 2, min: 2, k: 1, d: 5000940}},
		callers: []arrival{{at: 883}, {at: 1712}, {at: 1541}, {at: 370}, {at: 85, deadline: 5000028}},
		steps: map[[2]int]step{
			{0, 0}: {lat: 500826, kind: stepErr, stubborn: true}, {0, 1}: {lat: 500769, stubborn: true},
			{1, 0}: {lat: 500655, stubborn: true}, {1, 1}: {lat: 500598, stubborn: true},
			{2, 0}: {lat: 500484, stubborn: true}, {2, 1}: {lat: 500427, stubborn: true},
			{3, 0}: {lat: 500313, stubborn: true}, {3, 1}: {lat: 500256, stubborn: true}, {3, 2}: {lat: 500199, stubborn: true}, {3, 3}: {lat: 500142, stubborn: true},
			{4, 0}: {lat: 5000968},
		},
	}},
	// The model was wrong: an Adaptive limit's line watches the contexts
	// of the requests in it, so caller 2's request, queued behind caller
	// 0's (which waits for the rate limit's next unit), is answered at its
	// deadline, and the Limit outside lets caller 3 in at once (the Filter
	// rejects it). The model had left it queued until its turn.
	{"an adaptive limit answers a request in its line when its context ends", &script{
		layers:  []layer{{kind: "limit", n: 2}, {kind: "filter"}, {kind: "timeout", d: 20000940}, {kind: "adaptive", n: 2}, {kind: "ratelimit", n: 1, d: 20000883}},
		callers: []arrival{{at: 826}, {at: 655}, {at: 1370, deadline: 5000313}, {at: 2142, deadline: 5000085}},
		steps: map[[2]int]step{
			{0, 0}: {lat: 500769, stubborn: true}, {1, 0}: {lat: 500598, stubborn: true}, {2, 0}: {lat: 500256, stubborn: true}, {3, 0}: {lat: 500028, stubborn: true},
		},
	}},
	// The model was wrong: a caller whose deadline ends before its turn at
	// a Limited rate limit is refused at once (x/time/rate's Wait), where
	// it waited in line; and inside a stack, for the stage outside parking
	// it (an Adaptive here, which reserves its inner units its own way:
	// troupe was wrong there, and waited).
	{"a caller whose deadline ends before its turn is refused at once", &script{
		layers:  []layer{{kind: "ratelimit", n: 1, d: 20000940}, {kind: "limit", n: 1}, {kind: "limit", n: 1}, {kind: "limit", n: 1}},
		callers: []arrival{{at: 883, deadline: 5000826}, {at: 712, deadline: 5000655}},
		steps:   map[[2]int]step{{0, 0}: {lat: 500769}, {1, 0}: {lat: 500598}},
	}},
	{"a request an adaptive limit parks is refused at once", &script{
		layers:  []layer{{kind: "adaptive", n: 1}, {kind: "ratelimit", n: 1, d: 20000940}, {kind: "limit", n: 1}},
		callers: []arrival{{at: 883, deadline: 5000826}, {at: 712, deadline: 5000655}},
		steps:   map[[2]int]step{{0, 0}: {lat: 500769}, {1, 0}: {lat: 500598}},
	}},
}

// Each script troupe and the model once disagreed on, they agree on now.
//
// spec: EG1, H1, C1, RT1
func TestTheScriptsOnceFoundAgreeWithTheModel(t *testing.T) {
	for _, f := range found {
		t.Run(f.name, func(t *testing.T) {
			want := runModel(f.sc)
			var got record
			var err error
			synctest.Test(t, func(bt *testing.T) { got, err = runReal(bt, f.sc) })
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got.outs, want.outs) || !slices.Equal(got.rets, want.rets) || !slices.Equal(got.calls, want.calls) {
				t.Errorf("troupe and the model disagree\n%s\ntroupe:\n%s\nmodel:\n%s", f.sc, got, want)
			}
		})
	}
}
