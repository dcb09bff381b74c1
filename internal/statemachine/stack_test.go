package statemachine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"pgregory.net/rapid"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/backoff"
	"github.com/troupe-go/troupe/stages/reconnect"
	"github.com/troupe-go/troupe/supervisor"
	"github.com/troupe-go/troupe/troupetest"
)

// staged is a built stage, as the test looks at it.
type staged interface {
	Name() string
	Stats() troupe.Stats
}

// stack is one random stack and what it runs in.
type stack struct {
	desc   []string // outermost first
	kinds  []string // the layers' kinds, outermost first
	sys    *actors.System
	svc    troupe.Service[req, int] // what callers use: the stack, or the pipeline
	st     *troupe.Stack[req, int]
	stages []staged // innermost first
	rc     *reconnect.Reconnect[req, int]
	host   *actors.Host                   // a host of the test's own, or nil
	pipe   *supervisor.Pipeline[req, int] // or nil
	mock   *troupetest.Handle[req, int]   // the mock's handle, when the leaf is the mock
	units  atomic.Int64                   // units the mock was allowed in all
	plain  *plainLeaf                     // when the leaf is a plain service
}

// allowed are the kinds the next layer may have (outermost first), given
// the leaf and the layers drawn so far. While enableAdaptedCancel is off, a
// Timeout never sits over an adapted service (SpawnReady, the plain leaf);
// while enableGoneCallerUnits is off, neither a Timeout nor a Retry sits
// over a service whose units must come back (the mock, the plain leaf, or
// the stage below a SpawnReady).
func (s *stack) allowed(leaf string) []string {
	has := func(k string) bool { return slices.Contains(s.kinds, k) }
	var out []string
	for _, k := range kinds {
		adapted := k == "timeout" && (leaf == "plain" || has("spawnready")) ||
			k == "spawnready" && has("timeout")
		gone := (k == "timeout" || k == "retry") && (leaf != "func" || has("spawnready")) ||
			k == "spawnready" && (has("timeout") || has("retry"))
		if adapted && !enableAdaptedCancel || gone && !enableGoneCallerUnits {
			continue
		}
		out = append(out, k)
	}
	return out
}

// counted reports whether a service of the stack counts units that must
// come back when a caller is gone: the mock, the plain leaf, or the stage
// below a SpawnReady (whose permits it wins).
func (s *stack) counted() bool {
	return s.mock != nil || s.plain != nil || slices.Contains(s.kinds, "spawnready")
}

// adapted reports whether a stage of the stack waits for its inner
// service's readiness through stagekit.Adapt.
func (s *stack) adapted() bool { return s.plain != nil || slices.Contains(s.kinds, "spawnready") }

// allow lets the mock grant n more units.
func (s *stack) allow(n int) {
	s.units.Add(int64(n))
	s.mock.Allow(n)
}

// lostUnits reports the mock's units neither spent on a call nor left
// (allowed, or given back): each one is a unit some stage took and dropped.
func (s *stack) lostUnits() int64 {
	return s.units.Load() - s.mock.Calls() - int64(s.mock.Allowed())
}

// innermost is the kind of the stage over the leaf.
func (s *stack) innermost() string {
	if s.rc != nil {
		return "reconnect"
	}
	return s.kinds[len(s.kinds)-1]
}

// outer is the outermost stage.
func (s *stack) outer() staged { return s.stages[len(s.stages)-1] }

// build draws a stack and builds it in a new actor system.
func build(t *rapid.T, w *world) *stack {
	n := rapid.IntRange(2, 5).Draw(t, "stages")
	// The dropped-permit check at a quarter of its default, well within
	// the settle bound (1 s plus the margin); the default is tested in
	// package stagekit.
	opts := []actors.Option{actors.WithLogger(slog.New(handler{&w.drops})), actors.WithDroppedPermitCheck(droppedCheck)}
	if n%2 == 1 {
		// Half the stacks report to an observer that checks its events.
		// Decided by a draw made anyway, so that the sequences of the
		// seeds recorded before observers existed stay the same.
		w.obs = newPairs()
		opts = append(opts, actors.WithObserver(w.obs, "statemachine"))
	}
	s := &stack{sys: actors.NewSystem(opts...)}
	withRC := rapid.IntRange(0, 3).Draw(t, "reconnect") == 0
	if withRC {
		n--
	}
	leafKind := rapid.SampledFrom([]string{"func", "mock", "plain"}).Draw(t, "leaf")
	b := troupe.NewBuilder[req, int]()
	for i := range n {
		k := rapid.SampledFrom(s.allowed(leafKind)).Draw(t, fmt.Sprintf("layer%d", i))
		l, d := layer(t, w, k)
		b = b.Layer(s.record(l))
		s.kinds = append(s.kinds, k)
		s.desc = append(s.desc, d)
	}
	switch leafKind {
	case "func":
		w.conn = actors.Func(w.serve, "leaf")
	case "mock":
		m, h := troupetest.NewMock[req, int]()
		w.conn, s.mock = m, h
		s.allow(rapid.SampledFrom([]int{100, 0, 1, 2}).Draw(t, "mock.units"))
	case "plain":
		s.plain = newPlainLeaf(w, rapid.IntRange(1, 3).Draw(t, "plain.units"))
		w.conn = s.plain
	}
	var rcOpts []reconnect.Option
	if withRC {
		rcOpts = append(rcOpts, reconnect.ConnectTimeout(500*time.Millisecond), reconnect.OnStateChange(w.onChange))
		if c := capacity(t, "reconnect.capacity"); c > 0 {
			rcOpts = append(rcOpts, reconnect.Capacity(c))
		}
		s.desc = append(s.desc, "reconnect")
	}
	s.desc = append(s.desc, leafKind)
	buildIn := func(h troupe.Host) (troupe.Service[req, int], error) {
		inner := w.conn
		if withRC {
			rc, err := reconnect.New(h, reconnect.Dialer(w.dial), 0, rcOpts...)
			if err != nil {
				return nil, err
			}
			s.rc, inner = rc, rc
			s.stages = append(s.stages, rc)
		}
		st, err := b.Build(h, inner)
		s.st = st
		return st, err
	}
	hostKind := rapid.SampledFrom([]string{"system", "host", "pipeline"}).Draw(t, "host")
	s.desc = append(s.desc, "in "+hostKind)
	var err error
	switch hostKind {
	case "system":
		s.svc, err = buildIn(s.sys)
	case "host":
		if s.host, err = s.sys.NewHost("statemachine", actors.Intensity(100, time.Minute)); err == nil {
			s.svc, err = buildIn(s.host)
		}
	case "pipeline":
		delays, _ := backoff.New(time.Millisecond, 5*time.Millisecond)
		s.pipe, err = supervisor.New(s.sys, "statemachine", buildIn, supervisor.WithBackoff(delays, 100, time.Minute))
		s.svc = s.pipe
	}
	if err != nil {
		_ = s.sys.Shutdown(context.Background())
		t.Fatalf("building %s: %v", s, err)
	}
	return s
}

func (s *stack) String() string { return strings.Join(s.desc, " > ") }

// counters describes what each stage holds, outermost first, for failure
// messages.
func (s *stack) counters() string {
	var b strings.Builder
	for i := len(s.stages) - 1; i >= 0; i-- {
		st := s.stages[i].Stats()
		fmt.Fprintf(&b, "%s: %d/%d used, %d queued, %d waiting; ", s.stages[i].Name(), st.Used, st.Capacity, st.Queued, st.Waiting)
	}
	return b.String()
}

// record keeps the stage l builds, for the checks.
func (s *stack) record(l troupe.Layer[req, int]) troupe.Layer[req, int] {
	return troupe.LayerFunc[req, int](func(h troupe.Host, inner troupe.Service[req, int]) (troupe.Service[req, int], error) {
		svc, err := l.Layer(h, inner)
		if err != nil {
			return nil, err
		}
		st, ok := svc.(staged)
		if !ok {
			return nil, errors.New("statemachine: a layer built something that is not a stage")
		}
		s.stages = append(s.stages, st)
		return svc, nil
	})
}

// closers are the ways to close the stack that its host allows.
func (s *stack) closers() []string {
	if s.host != nil || s.pipe != nil {
		return []string{"stack", "host", "shutdown"}
	}
	return []string{"stack", "shutdown"}
}

// close closes the stack the way kind says.
func (s *stack) close(ctx context.Context, kind string) error {
	switch kind {
	case "host":
		if s.pipe != nil {
			return s.pipe.Close(ctx)
		}
		return s.host.Close(ctx)
	case "shutdown":
		return s.sys.Shutdown(ctx)
	}
	err := s.st.Close(ctx)
	if s.rc != nil {
		err = errors.Join(err, s.rc.Close(ctx))
	}
	return err
}
