package statemachine

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/stages/filter"
	"github.com/troupe-go/troupe/stages/loadshed"
	"github.com/troupe-go/troupe/stages/reconnect"
	"github.com/troupe-go/troupe/stages/retry"
	"github.com/troupe-go/troupe/stages/timeout"
)

// tally counts what the sequences did and what the calls got, so that a
// run shows what it exercised.
var tally struct {
	mu sync.Mutex
	n  map[string]int
}

func count(what string) {
	tally.mu.Lock()
	defer tally.mu.Unlock()
	if tally.n == nil {
		tally.n = map[string]int{}
	}
	tally.n[what]++
}

// outcomeClass names the kind of outcome a call got.
func outcomeClass(err error) string {
	for _, c := range []struct {
		err  error
		name string
	}{
		{troupe.ErrRestarted, "restarted"}, {troupe.ErrClosed, "closed"}, {troupe.ErrPanic, "panic"},
		{timeout.ErrTimeout, "timeout"}, {loadshed.ErrOverloaded, "overloaded"}, {filter.ErrRejected, "rejected"},
		{retry.ErrExhausted, "exhausted"}, {reconnect.ErrConnect, "connect"}, {errDownstream, "downstream error"},
	} {
		if errors.Is(err, c.err) {
			return c.name
		}
	}
	if err == nil {
		return "ok"
	}
	return "context"
}

// summary is the tally, sorted.
func summary() string {
	tally.mu.Lock()
	defer tally.mu.Unlock()
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(tally.n)) {
		fmt.Fprintf(&b, "%s %d; ", k, tally.n[k])
	}
	return b.String()
}
