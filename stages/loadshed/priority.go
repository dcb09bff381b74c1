package loadshed

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/troupe-go/troupe/internal/opt"
)

// Priority ranks a request for shedding: under overload a LoadShed with
// slots kept for higher priorities (KeepFor) sheds the lower ones first. A
// request's priority travels in its context (WithPriority); a context
// without one is Normal. Any int works; the named levels are the usual
// ones.
type Priority int

// The usual priority levels, lowest first.
const (
	Low      Priority = -1
	Normal   Priority = 0
	High     Priority = 1
	Critical Priority = 2
)

type priorityKey struct{}

// WithPriority returns a copy of ctx that gives the requests made with it
// priority p at every LoadShed they pass.
func WithPriority(ctx context.Context, p Priority) context.Context {
	return context.WithValue(ctx, priorityKey{}, p)
}

// PriorityFrom returns the priority ctx carries: Normal when it carries none.
func PriorityFrom(ctx context.Context) Priority {
	if p, ok := ctx.Value(priorityKey{}).(Priority); ok {
		return p
	}
	return Normal
}

// KeepFor keeps n of the stage's slots for requests of priority p or
// higher: a request of a lower priority is shed once only those slots are
// free. Slots kept for several priorities add up: with Capacity(10),
// KeepFor(High, 3) and KeepFor(Critical, 2), Normal and Low requests may
// fill 5 slots, High ones 8 and Critical ones all 10. So as the service
// below falls behind and the slots fill, the lowest priorities are shed
// first, and the highest last. The kept slots must be fewer than the
// capacity, so that every priority can get at least one slot: other
// counts, or a negative one, are New's error.
func KeepFor(p Priority, n int) Option {
	return func(o *options) { o.keep = append(o.keep, kept{p, n}) }
}

type kept struct {
	p Priority
	n int
}

// levels are a LoadShed's slot limits by priority, from the slots kept for
// priorities; nil when none are (every request may use every slot). Read
// only once made.
type levels []level

// level: requests of priority below p may use only limit slots (levels
// are sorted by p, ascending).
type level struct {
	p     Priority
	limit int
}

// newLevels checks keep against capacity and turns it into levels.
func newLevels(keep []kept, capacity int) (levels, error) {
	if len(keep) == 0 {
		return nil, nil
	}
	byP := map[Priority]int{}
	total := 0
	for _, k := range keep {
		if k.n < 0 {
			return nil, opt.Bad("loadshed", "KeepFor", fmt.Sprintf("(%d, %d)", k.p, k.n), "a negative number of slots")
		}
		byP[k.p] += k.n
		total += k.n
	}
	if total >= capacity {
		return nil, opt.Bad("loadshed", "KeepFor", total, fmt.Sprintf("the slots kept must be fewer than the capacity, %d", capacity))
	}
	var ls levels
	for p, n := range byP {
		ls = append(ls, level{p: p, limit: n})
	}
	slices.SortFunc(ls, func(a, b level) int { return cmp.Compare(a.p, b.p) })
	// A request below level i may use what is not kept for level i and
	// above.
	above := 0
	for i := len(ls) - 1; i >= 0; i-- {
		above += ls[i].limit
		ls[i].limit = capacity - above
	}
	return ls, nil
}

// limit returns how many slots a request with ctx may use.
func (ls levels) limit(ctx context.Context, capacity int) int {
	p := PriorityFrom(ctx)
	for _, l := range ls {
		if p < l.p {
			return l.limit
		}
	}
	return capacity
}
