package differential

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"pgregory.net/rapid"
)

// step is what the downstream does on one call: it takes lat, then
// returns a value, an error or panics; stubborn work ignores its context,
// other work returns its context's error as soon as it ends.
type step struct {
	lat      time.Duration
	kind     int // stepOK, stepErr, stepPanic
	stubborn bool
}

const (
	stepOK = iota
	stepErr
	stepPanic
)

func (st step) outcome(id, n int) outcome {
	switch st.kind {
	case stepErr:
		return fail("leaf")
	case stepPanic:
		return fail("panic")
	}
	return outcome{v: id*100 + n}
}

func (st step) String() string {
	k := [...]string{"ok", "err", "panic"}[st.kind]
	if st.stubborn {
		k += "!"
	}
	return fmt.Sprintf("%v %s", st.lat, k)
}

// layer is one stage of a stack, with its parameters.
type layer struct {
	kind   string
	n      int           // limit, buffer, loadshed, adaptive: capacity; retry: max; ratelimit: num; breaker: window
	d      time.Duration // timeout, abandon; retry: backoff; ratelimit: per; hedge: delay; breaker: open delay; asyncfilter: the check's time
	min, k int           // breaker: min calls, trials
}

func (l layer) String() string {
	switch l.kind {
	case "limit", "buffer", "loadshed", "adaptive", "spawnready":
		return fmt.Sprintf("%s(%d)", l.kind, l.n)
	case "timeout", "abandon", "hedge", "asyncfilter":
		return fmt.Sprintf("%s(%v)", l.kind, l.d)
	case "breaker":
		return fmt.Sprintf("breaker(window %d, min %d, trials %d, %v)", l.n, l.min, l.k, l.d)
	case "retry":
		return fmt.Sprintf("retry(%d, %v)", l.n, l.d)
	case "ratelimit":
		return fmt.Sprintf("ratelimit(%d/%v)", l.n, l.d)
	}
	return l.kind
}

// arrival is one caller: when it calls, and its context's deadline after
// that (0: none).
type arrival struct {
	at, deadline time.Duration
}

// script is one sequence: a stack (outermost first), its callers, and
// the downstream's steps by caller and call.
type script struct {
	layers  []layer
	callers []arrival
	steps   map[[2]int]step
	salt    int64
}

// step is caller id's n-th call's step (a quick success past the drawn
// ones).
func (s *script) step(id, n int) step {
	if st, ok := s.steps[[2]int{id, n}]; ok {
		return st
	}
	return step{lat: time.Millisecond}
}

func (s *script) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "stack: %v\n", s.layers)
	for i, a := range s.callers {
		fmt.Fprintf(&b, "caller %d: at %v, deadline %v;", i, a.at, a.deadline)
		for n := 0; ; n++ {
			st, ok := s.steps[[2]int{i, n}]
			if !ok {
				break
			}
			fmt.Fprintf(&b, " [%s]", st)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// reaction is how long work of caller id that honours its context takes
// to return once the context ended: a few microseconds, so that what the
// end set off at its instant (the outcome that ended it going on) is over
// before the work returns, on both sides alike, rather than racing it.
func reaction(id int) time.Duration { return 3*time.Microsecond + time.Duration(id*7) }

// rejects is the Filter's predicate: callers 3, 7, ... are rejected.
func rejects(id int) bool { return id%4 == 3 }

// kinds are the stages the model knows.
var kinds = []string{"limit", "timeout", "retry", "ratelimit", "buffer", "loadshed", "filter", "fallback",
	"hedge", "breaker", "asyncfilter", "abandon", "adaptive", "spawnready"}

// Times are drawn in microseconds from wide ranges, each with a salt of
// nanoseconds of its own, so that two events the outcome depends on almost
// never fall on one instant, even in scripts rapid has shrunk to the
// smallest times.
func (s *script) drawDur(t *rapid.T, label string, lo, hi time.Duration) time.Duration {
	s.salt++
	us := rapid.Int64Range(int64(lo/time.Microsecond), int64(hi/time.Microsecond)).Draw(t, label)
	return time.Duration(us)*time.Microsecond + time.Duration(s.salt*7919%997)
}

func drawScript(t *rapid.T) *script {
	s := &script{steps: map[[2]int]step{}}
	drawDur := s.drawDur
	depth := rapid.IntRange(2, 5).Draw(t, "depth")
	spawned := false
	for i := range depth {
		k := rapid.SampledFrom(kinds).Draw(t, fmt.Sprintf("kind%d", i))
		if k == "ratelimit" && spawned {
			// Below a SpawnReady each permit's call enters on its caller's
			// goroutine, and a rate limit spends its unit on whichever it
			// takes first: callers that win permits at one instant race.
			k = "limit"
		}
		spawned = spawned || k == "spawnready"
		l := layer{kind: k}
		switch k {
		case "limit", "buffer", "adaptive":
			l.n = rapid.IntRange(1, 3).Draw(t, "cap")
		case "hedge":
			l.d = drawDur(t, "hedge delay", time.Millisecond, 100*time.Millisecond)
		case "asyncfilter":
			l.d = drawDur(t, "check", 100*time.Microsecond, 20*time.Millisecond)
		case "breaker":
			l.n = rapid.IntRange(1, 4).Draw(t, "window")
			l.min = rapid.IntRange(1, l.n).Draw(t, "min calls")
			l.k = rapid.IntRange(1, 2).Draw(t, "trials")
			l.d = drawDur(t, "open delay", 5*time.Millisecond, 100*time.Millisecond)
		case "loadshed", "spawnready":
			l.n = rapid.IntRange(1, 2).Draw(t, "cap")
		case "timeout", "abandon":
			l.d = drawDur(t, "timeout", 20*time.Millisecond, 200*time.Millisecond)
		case "retry":
			l.n = rapid.IntRange(0, 3).Draw(t, "max")
			if rapid.Bool().Draw(t, "backoff?") {
				l.d = drawDur(t, "backoff", time.Millisecond, 40*time.Millisecond)
			}
		case "ratelimit":
			l.n = rapid.IntRange(1, 3).Draw(t, "num")
			l.d = drawDur(t, "per", 20*time.Millisecond, 120*time.Millisecond)
		}
		s.layers = append(s.layers, l)
	}
	n := rapid.IntRange(1, 6).Draw(t, "callers")
	for i := range n {
		a := arrival{at: drawDur(t, "at", 0, 300*time.Millisecond)}
		if rapid.IntRange(0, 3).Draw(t, "deadline?") == 0 {
			a.deadline = drawDur(t, "deadline", 5*time.Millisecond, 300*time.Millisecond)
		}
		s.callers = append(s.callers, a)
		calls := rapid.IntRange(1, 5).Draw(t, "calls")
		for c := range calls {
			st := step{lat: drawDur(t, "lat", 500*time.Microsecond, 150*time.Millisecond)}
			switch r := rapid.IntRange(0, 9).Draw(t, "outcome"); {
			case r < 5:
				st.kind = stepOK
			case r < 9 || !enablePanics:
				st.kind = stepErr
			default:
				st.kind = stepPanic
			}
			st.stubborn = rapid.IntRange(0, 3).Draw(t, "stubborn?") == 0
			s.steps[[2]int{i, c}] = st
		}
	}
	return s
}

// Switches for behaviour the model and troupe did not agree on, each on
// since its fix.
const (
	// Fixed: troupe's retries retried a panic (a panic is a bug; the
	// policies troupe ships no longer retry it).
	enablePanics = true
	// Fixed: an Adaptive limit freed its permit when an outcome passed it,
	// also while the caller still ran the work (a hedge lost, a timeout
	// fired below it); stagekit's Envelope.KeepWhileWorkRuns.
	enableAdaptiveKeep = true
)

// record is what one side saw.
type record struct {
	outs  []outcome
	rets  []time.Duration
	calls []call
	racy  bool // the model found two goroutines racing at one instant
}

func (r record) String() string {
	var b strings.Builder
	for i := range r.outs {
		o := r.outs[i]
		v := fmt.Sprint(o.v)
		if o.err != "" {
			v = o.err
		}
		fmt.Fprintf(&b, "caller %d: %s at %v\n", i, v, r.rets[i])
	}
	for _, c := range r.calls {
		fmt.Fprintf(&b, "call %d.%d at %v\n", c.id, c.n, c.at)
	}
	return b.String()
}

func sortCalls(cs []call) {
	slices.SortFunc(cs, func(a, b call) int {
		if a.at != b.at {
			return int(a.at - b.at)
		}
		if a.id != b.id {
			return a.id - b.id
		}
		return a.n - b.n
	})
}
