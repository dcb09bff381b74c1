package mailbox_test

import (
	"flag"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
)

var seedFlag = flag.Uint64("seed", 0, "seed of the randomised tests (0: "+seedEnv+", else a new one each run)")

// seedEnv names the environment variable that sets the seed when -seed is
// not given.
const seedEnv = "TROUPE_TEST_SEED"

// testSeed returns the seed of a randomised test and logs it, so that a
// failure can be replayed with -seed or TROUPE_TEST_SEED.
func testSeed(t *testing.T) uint64 {
	t.Helper()
	seed := *seedFlag
	if s := os.Getenv(seedEnv); seed == 0 && s != "" {
		var err error
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatalf("%s=%q: %v", seedEnv, s, err)
		}
	}
	if seed == 0 {
		seed = rand.Uint64() | 1
	}
	t.Logf("seed %d (replay: go test -run '^%s$' ./mailbox -seed=%d)", seed, t.Name(), seed)
	return seed
}
