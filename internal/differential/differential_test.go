package differential

import (
	"flag"
	"os"
	"slices"
	"strconv"
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
// when they are more than one in 20.
var racy, drawn atomic.Int64

// Every caller gets from a random stack what the reference model says
// it gets, when it says, and the downstream is called as often, by the
// same callers, at the same times.
//
// spec: EG1, EG2, EG3, EG4, EG13, CORE6
func TestEveryRandomStackAgreesWithTheModel(t *testing.T) {
	setChecks(t, *sequences)
	racy.Store(0)
	drawn.Store(0)
	defer func() {
		if n, of := racy.Load(), drawn.Load(); n*20 > of {
			t.Errorf("%d of %d scripts raced two goroutines: the comparison left them out", n, of)
		} else {
			t.Logf("%d of %d scripts left out: two goroutines raced at one instant", n, of)
		}
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
		synctest.Test(t, func(bt *testing.T) { got, err = runReal(bt, sc) })
		if err != nil {
			rt.Fatalf("%v\n%s", err, sc)
		}
		if !slices.Equal(got.outs, want.outs) || !slices.Equal(got.rets, want.rets) || !slices.Equal(got.calls, want.calls) {
			rt.Fatalf("troupe and the model disagree\n%s\ntroupe:\n%s\nmodel:\n%s", sc, got, want)
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
