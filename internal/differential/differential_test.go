package differential

import (
	"flag"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"pgregory.net/rapid"
)

var sequences = flag.Int("differential.n", 1000, "how many random scripts to run")

// racy counts the scripts left out because two goroutines raced at one
// instant in them (most of them two callers whose SpawnReady permits came
// at one instant), of drawn, the scripts the test drew; the test fails
// when they are more than one in 20. raced counts the scripts compared
// only on what holds whatever the order (see record.invariants); the test
// fails when they are more than one in 10.
var racy, raced, drawn atomic.Int64

// compared counts, by kind, the scripts with a layer of that kind that
// were compared in full; with 1,000 drawn or more, each kind must have
// one.
var compared sync.Map // kind -> *atomic.Int64

// Every caller gets from a random stack what the reference model says
// it gets, when it says, and the downstream is called as often, by the
// same callers, at the same times, below the same endpoints; a balancer,
// Steer and the mapping combinators compose with every built-in stage.
//
// spec: EG1, EG2, EG3, EG4, EG13, CORE6, BAL1, BAL4
func TestEveryRandomStackAgreesWithTheModel(t *testing.T) {
	setChecks(t, *sequences)
	racy.Store(0)
	raced.Store(0)
	drawn.Store(0)
	compared.Clear()
	defer func() {
		if n, of := racy.Load(), drawn.Load(); n*20 > of {
			t.Errorf("%d of %d scripts raced two goroutines: the comparison left them out", n, of)
		} else {
			t.Logf("%d of %d scripts left out: two goroutines raced at one instant", n, of)
		}
		if n, of := raced.Load(), drawn.Load(); n*10 > of {
			t.Errorf("%d of %d scripts compared only on what holds whatever the order", n, of)
		} else {
			t.Logf("%d of %d scripts compared on what holds whatever the order: two goroutines at once touched a balancer or a stage's units", n, of)
		}
		var b strings.Builder
		for _, k := range append(kinds, "troupehttp.Handler") {
			n, ok := compared.Load(k)
			if !ok && drawn.Load() >= 1000 && !t.Failed() {
				t.Errorf("no script with a %s was compared in full", k)
				continue
			}
			if ok {
				fmt.Fprintf(&b, " %s %d", k, n.(*atomic.Int64).Load())
			}
		}
		t.Logf("compared in full, by kind:%s", b.String())
	}()
	rapid.Check(t, func(rt *rapid.T) {
		sc := drawScript(rt)
		drawn.Add(1)
		want := runModel(sc)
		if want.racy {
			racy.Add(1)
			return // no single right answer (see world.racy)
		}
		var got record
		var err error
		if *trace {
			fmt.Printf("script:\n%s", sc)
		}
		synctest.Test(t, func(bt *testing.T) { got, err = runReal(bt, sc) })
		if err != nil {
			rt.Fatalf("%v\n%s", err, sc)
		}
		if err := got.invariants(sc); err != nil {
			rt.Fatalf("%v\n%s\ntroupe:\n%s", err, sc, got)
		}
		if want.raced {
			raced.Add(1)
			return
		}
		if !slices.Equal(got.outs, want.outs) || !slices.Equal(got.rets, want.rets) || !slices.Equal(got.calls, want.calls) {
			rt.Fatalf("troupe and the model disagree\n%s\ntroupe:\n%s\nmodel:\n%s", sc, got, want)
		}
		seen := map[string]bool{}
		if sc.http {
			n, _ := compared.LoadOrStore("troupehttp.Handler", new(atomic.Int64))
			n.(*atomic.Int64).Add(1)
		}
		for _, l := range sc.layers {
			if !seen[l.kind] {
				seen[l.kind] = true
				n, _ := compared.LoadOrStore(l.kind, new(atomic.Int64))
				n.(*atomic.Int64).Add(1)
			}
		}
	})
}

// checksOnCommandLine reports whether -rapid.checks was given on the
// command line. It is read once, before the first setChecks sets the flag:
// flag.Visit counts a flag.Set as set too, so that otherwise the first
// test's count would hold for every test after it.
var checksOnCommandLine = sync.OnceValue(func() bool {
	explicit := false
	flag.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == "rapid.checks" })
	return explicit
})

// setChecks makes rapid run n checks, unless -rapid.checks or RAPID_CHECKS
// says otherwise.
func setChecks(t *testing.T, n int) {
	if _, ok := os.LookupEnv("RAPID_CHECKS"); ok || checksOnCommandLine() {
		return
	}
	if err := flag.Set("rapid.checks", strconv.Itoa(n)); err != nil {
		t.Fatal(err)
	}
}
