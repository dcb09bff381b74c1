package troupe_test

import (
	"reflect"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/troupe-go/troupe/stages/buffer"
	"github.com/troupe-go/troupe/stages/fallback"
	"github.com/troupe-go/troupe/stages/filter"
	"github.com/troupe-go/troupe/stages/limit"
	"github.com/troupe-go/troupe/stages/loadshed"
	"github.com/troupe-go/troupe/stages/ratelimit"
	"github.com/troupe-go/troupe/stages/reconnect"
	"github.com/troupe-go/troupe/stages/retry"
	"github.com/troupe-go/troupe/stages/spawnready"
	"github.com/troupe-go/troupe/stages/timeout"
)

// A stage's type offers what its users need, and nothing of the runtime
// that must only run on the stage's own actor.
//
// spec: API2, HR10
func TestAPI2_StageTypesOfferNoRuntimeMethod(t *testing.T) {
	user := []string{"Reserve", "TryReserve", "ReserveAndCall", "Close", "Name", "Stats"}
	types := map[any][]string{ // each stage's own accessors, and its settings changed while it runs (safe anywhere)
		&buffer.Buffer[int, int]{}:         nil,
		&fallback.Fallback[int, int]{}:     {"Counts"},
		&filter.Filter[int, int]{}:         nil,
		&filter.AsyncFilter[int, int]{}:    {"Checking"},
		&limit.Limit[int, int]{}:           {"Available", "SetCapacity"},
		&loadshed.LoadShed[int, int]{}:     nil,
		&ratelimit.RateLimit[int, int]{}:   {"Limited", "Rate", "SetBurst", "SetRate", "Snapshot"},
		&reconnect.Reconnect[int, int]{}:   {"Counters", "State"},
		&retry.Retry[int, int]{}:           {"Sessions"},
		&spawnready.SpawnReady[int, int]{}: nil,
		&timeout.Timeout[int, int]{}:       {"Abandoned", "InFlight"},
	}
	for v, own := range types {
		typ := reflect.TypeOf(v)
		var got []string
		for i := range typ.NumMethod() {
			got = append(got, typ.Method(i).Name)
		}
		want := append(slices.Clone(user), own...)
		slices.Sort(want)
		assert.Equal(t, want, got, "%v", typ)
	}
}
