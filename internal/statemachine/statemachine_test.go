package statemachine

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"go.uber.org/goleak"
	"pgregory.net/rapid"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors/stagekit"
	"github.com/troupe-go/troupe/internal/rt"
)

// Switches for the operations that triggered known bugs. Each one that is
// false says what it waits for, and what the test leaves out meanwhile;
// turn it back on once that is fixed. All are on: each comment names the
// fix and its regression test.
const (
	enableDownstreamPanics = true // a downstream function that panics
	enablePredicatePanics  = true // a Filter predicate that panics
	enableCheckPanics      = true // an AsyncFilter check that panics
	enablePolicyPanics     = true // a retry policy whose Retry panics
	enableClonePanics      = true // a retry policy whose CloneRequest panics
	enableReadyPanics      = true // the mock's readiness panics: a stage restart
	enablePlainPanics      = true // a plain service's Reserve panics
	enableDialFaults       = true // a Reconnect dial that fails or blocks
	enableDialPanics       = true // a Reconnect dial that panics
	enableCallbackPanics   = true // a Reconnect state callback that panics

	// Fixed: a Retry whose inner readiness panicked as it started a
	// session answered it twice (stagekit's Stage.Keep;
	// TestHR3_RetryWhoseInnerReadinessPanics...).
	enableRetryRestarts = true

	// Fixed: stagekit.Adapt knew its background waits by the stage's
	// Waiter, which the stage reuses (TestHR3_ACancelledAdaptedWait...).
	enableAdaptedCancel = true

	// Fixed: a caller cancelling as its retry wait ended could get
	// ErrSessionOver (TestHR3_ACallerWhoseContextEnds...).
	enableRetryCancel = true

	// Fixed: a Reconnect's connection actor that failed in a host that
	// restarts at once and was closed right after got protoactor's Restart
	// after it stopped, a dead letter (the supervisor now posts into the
	// child's mailbox; TestHR2_ClosingRightAfterAFailedDial...).
	enableImmediateConnRestarts = true

	// Fixed: work handed to a caller that is gone gives back the unit its
	// leaf reserved (stagekit.Leaf's Release).
	enableGoneCallerUnits = true

	// Fixed: a short Close of a host left a caller that was running leaf
	// work after its outcome came (seed 6748266216049837403;
	// TestHR2_CloseAbandonsTheAttempt...).
	enableShortHostCloses = true
)

// Bounds of the operations, in real time (see bounded).
const (
	reserveWait  = 15 * time.Millisecond  // a Reserve's deadline
	callDeadline = 5 * time.Second        // a call's own deadline: the safety net
	closeShort   = 20 * time.Millisecond  // a short Close's deadline
	closeLong    = 3 * time.Second        // a long Close's deadline
	closePeek    = 30 * time.Millisecond  // how long a long Close runs before the downstream is told to finish
	settleBound  = 1 * time.Second        // for the calls to end once the downstream answers everything
	droppedCheck = 250 * time.Millisecond // the systems' dropped-permit check (see build)
	maxFullSet   = 64                     // reservations of the full-set check, for an outermost stage with no limit of its own
	steps        = 50                     // operations per sequence, on average (before a Close ends it)
	postCloseOps = 4                      // operations on a closed stack before the sequence ends
	maxFaults    = 4                      // failures injected per sequence: below any restart intensity
)

var (
	flagN      = flag.Int("statemachine.n", 0, "number of random sequences (0: 50, or 40 with -short); -rapid.checks wins when given")
	flagMargin = flag.Duration("statemachine.margin", 2*time.Second, "how long an operation may outlive its bound before it counts as a hang")
)

// checks is the number of sequences to run.
func checks() int {
	switch {
	case *flagN > 0:
		return *flagN
	case testing.Short():
		return 40
	}
	return 50 // about 5 s under -race on two cores: 1,000 take about 100 s
}

// machine is the state of one sequence: the stack, the permits the test
// holds, the calls it made.
type machine struct {
	w      *world
	s      *stack
	margin time.Duration

	ids     int
	held    []*troupe.Permit[req, int] // reserved, neither called nor released
	spent   []spent                    // called or released: for the reuse operation
	dropped int                        // permits forgotten
	calls   []*call

	closeStarted time.Time // when the first Close started
	closed       bool      // a Close returned
	closeAfter   int       // operations before a Close may run
	steps        int       // operations run
	postClose    int       // operations tried since
	faults       int       // failures injected (restart, dial faults)
	broken       error     // the stack closed itself after an injected fault

	leaked0     uint64
	violations0 uint64
	deadLetters atomic.Int64
	deadLetter  atomic.Value // the first one, described
	pumpCancel  context.CancelFunc
	finished    bool
}

// spec: HR11, CORE1, CORE3, CORE4, CORE6, ACT5, HR1, HR2, HR3, HR6, SUP3
func TestHR11_RandomStacksKeepEveryPromise(t *testing.T) {
	setChecks(t)
	rapid.Check(t, func(t *rapid.T) {
		leaks := goleak.IgnoreCurrent()
		m := newMachine(t)
		t.Cleanup(m.teardown)
		t.Logf("stack: %v", m.s)
		t.Repeat(m.actions())
		m.finish(t, leaks)
	})
	t.Log(summary())
}

// setChecks makes rapid run checks() sequences of about steps operations,
// unless its own flags or environment variables say otherwise.
func setChecks(t *testing.T) {
	n := checks()
	if testing.Short() {
		n *= 5 // rapid divides the checks by 5 under -short (and the steps by 2)
	}
	setDefault(t, "rapid.checks", "RAPID_CHECKS", n)
	setDefault(t, "rapid.steps", "RAPID_STEPS", steps)
}

// setDefault sets rapid's flag name to v unless the command line or the
// environment variable env set it.
func setDefault(t *testing.T, name, env string, v int) {
	explicit := false
	flag.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == name })
	if _, ok := os.LookupEnv(env); ok || explicit {
		return
	}
	if err := flag.Set(name, strconv.Itoa(v)); err != nil {
		t.Fatal(err)
	}
}

func newMachine(t *rapid.T) *machine {
	w := newWorld()
	m := &machine{w: w, margin: *flagMargin, leaked0: troupe.LeakedPermits(), violations0: stagekit.Violations()}
	m.s = build(t, w)
	m.closeAfter = rapid.IntRange(0, 60).Draw(t, "closeAfter")
	rt.ActorSystem((*stagekit.System)(m.s.sys)).EventStream.Subscribe(func(msg any) {
		if d, ok := msg.(*actor.DeadLetterEvent); ok {
			if m.deadLetters.Add(1) == 1 {
				m.deadLetter.Store(fmt.Sprintf("%T %+v to %v", d.Message, d.Message, d.PID))
			}
		}
	})
	if m.s.mock != nil {
		ctx, cancel := context.WithCancel(context.Background())
		w.pumpDone, m.pumpCancel = make(chan struct{}), cancel
		go w.pump(ctx, m.s.mock)
	}
	return m
}

// teardown frees what a failed sequence left, without checking anything.
func (m *machine) teardown() {
	if m.finished {
		return
	}
	m.w.drain()
	if m.s.mock != nil {
		m.s.allow(1 << 20)
	}
	for _, c := range m.calls {
		c.cancel()
	}
	done := make(chan struct{})
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = m.s.sys.Shutdown(ctx)
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
	}
	if m.pumpCancel != nil {
		m.pumpCancel()
	}
}
