package troupe_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/stages"
	"github.com/troupe-go/troupe/stages/buffer"
	"github.com/troupe-go/troupe/stages/filter"
	"github.com/troupe-go/troupe/stages/limit"
	"github.com/troupe-go/troupe/stages/loadshed"
	"github.com/troupe-go/troupe/stages/ratelimit"
	"github.com/troupe-go/troupe/stages/retry"
	"github.com/troupe-go/troupe/stages/spawnready"
	"github.com/troupe-go/troupe/stages/timeout"
	"github.com/troupe-go/troupe/troupetest"
)

// mailboxed is what every stage offers for its counters.
type mailboxed interface {
	troupe.Closer
	troupe.StageInfo
}

// Every stage with a Capacity option reads it the same way: 0 is no limit
// of its own, a value it cannot hold is an error, never another capacity.
//
// spec: HR4, HR5
func TestHR4_CapacityMeansTheSameOnEveryStage(t *testing.T) {
	sys := newSystem(t)
	api := actors.Func(func(_ context.Context, v int) (int, error) { return v, nil })
	even := func(v int) (int, error) { return v, nil }
	check := func(_ context.Context, v int) (int, error) { return v, nil }
	kinds := map[string]func(n int) (mailboxed, error){
		"timeout": func(n int) (mailboxed, error) {
			return timeout.New[int, int](sys, api, time.Second, timeout.Capacity(n))
		},
		"retry": func(n int) (mailboxed, error) {
			return retry.New[int, int](sys, api, retry.Attempts[int, int]{Max: 1}, retry.Capacity(n))
		},
		"ratelimit": func(n int) (mailboxed, error) {
			return ratelimit.New[int, int](sys, api, ratelimit.Rate{Num: 5, Per: time.Second}, ratelimit.Capacity(n))
		},
		"filter": func(n int) (mailboxed, error) {
			return filter.NewFilter[int, int](sys, api, even, filter.Capacity(n))
		},
		"asyncfilter": func(n int) (mailboxed, error) {
			return filter.NewAsync[int, int](sys, api, check, filter.Capacity(n))
		},
		"spawnready": func(n int) (mailboxed, error) {
			return spawnready.New[int, int](sys, api, spawnready.Capacity(n))
		},
	}
	for name, spawn := range kinds {
		t.Run(name, func(t *testing.T) {
			for _, bad := range []int{-1, 1 << 31, 1<<32 + 5} {
				_, err := spawn(bad)
				assert.ErrorIs(t, err, troupe.ErrBadConfig, "capacity %d", bad)
			}
			for n, want := range map[int]int{0: actors.MaxCapacity, 7: 7} {
				s, err := spawn(n)
				require.NoError(t, err, "capacity %d", n)
				assert.Equal(t, want, s.Stats().Capacity, "capacity %d", n)
				require.NoError(t, s.Close(context.Background()))
			}
		})
	}
}

// A limit, a buffer or a load shedder is its capacity: it is taken
// exactly, or refused (a LoadShed of capacity 0 would never shed).
//
// spec: HR4, EG7
func TestHR4_LimitAndBufferSizesAreExactOrErrors(t *testing.T) {
	sys := newSystem(t)
	api := actors.Func(func(_ context.Context, v int) (int, error) { return v, nil })
	for _, bad := range []int{0, -1, 1 << 31, 1<<32 + 5} {
		_, err := limit.New[int, int](sys, api, bad)
		assert.ErrorIs(t, err, troupe.ErrBadConfig, "limit %d", bad)
		_, err = buffer.New[int, int](sys, api, bad)
		assert.ErrorIs(t, err, troupe.ErrBadConfig, "buffer %d", bad)
		_, err = loadshed.New[int, int](sys, api, loadshed.Capacity(bad))
		troupetest.BadOption(t, err, "loadshed", "Capacity")
		assert.ErrorIs(t, err, troupe.ErrBadConfig, "loadshed %d", bad)
	}
	ls, err := loadshed.New[int, int](sys, api, loadshed.Capacity(7))
	require.NoError(t, err)
	assert.Equal(t, 7, ls.Stats().Capacity)
	require.NoError(t, ls.Close(context.Background()))
	l, err := limit.New[int, int](sys, api, actors.MaxCapacity)
	require.NoError(t, err)
	assert.Equal(t, actors.MaxCapacity, l.Available())
	require.NoError(t, l.Close(context.Background()))
}

// A configuration error names who refused it, the option and the value,
// says why, matches ErrBadConfig and unwraps to its cause; errors.As finds
// it under the wrapping a constructor adds.
//
// spec: KIT4
func TestAConfigErrorNamesTheStageTheOptionAndTheValue(t *testing.T) {
	cause := errors.New("the mailbox said no")
	err := fmt.Errorf("building: %w", &troupe.ConfigError{Stage: "limit", Option: "Limit", Value: 0, Why: "need 1 to 9", Err: cause})
	assert.EqualError(t, err, "building: troupe: limit: bad Limit 0: need 1 to 9: the mailbox said no")
	assert.ErrorIs(t, err, troupe.ErrBadConfig)
	assert.ErrorIs(t, err, cause)
	var ce *troupe.ConfigError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "Limit", ce.Option)
	assert.EqualError(t, &troupe.ConfigError{Stage: "fallback", Option: "When", Why: "nil"}, "troupe: fallback: bad When: nil")
	assert.False(t, errors.Is(&troupe.ConfigError{}, troupe.ErrClosed))

	// Through the builder, each stage's refusal is one.
	sys := newSystem(t)
	api := actors.Func(func(_ context.Context, v int) (int, error) { return v, nil })
	_, err = stages.Stack[int, int]().Limit(0).Build(sys, api)
	troupetest.BadOption(t, err, "limit", "Limit")
	_, err = stages.Stack[int, int]().Timeout(-time.Second).Build(sys, api)
	troupetest.BadOption(t, err, "timeout", "Timeout")
	_, err = stages.Stack[int, int]().Limit(1).Named("").Build(sys, api)
	troupetest.BadOption(t, err, "Build", "Named")
}

// The typed callbacks of a stage are typed by the stack: a breaker's
// classifier, a fallback's result test, a hedge's final test and clone of
// another type than the stack's do not compile, where a Setting (an option
// of any type) fits every stack.
//
// spec: KIT4
func TestACallbackOfTheWrongTypeDoesNotCompile(t *testing.T) {
	out := compileFails(t, `package misuse

import (
	"context"
	"time"

	"github.com/troupe-go/troupe/stages"
	"github.com/troupe-go/troupe/stages/breaker"
	"github.com/troupe-go/troupe/stages/fallback"
	"github.com/troupe-go/troupe/stages/hedge"
)

func Misuse() {
	onString := func(string, error) bool { return false }
	alt := func(context.Context, int, error) (int, error) { return 0, nil }
	_ = stages.Stack[int, int]().
		Breaker(breaker.CountWindow(10), breaker.Classify(onString)).
		Breaker(breaker.Exclude(onString)).
		Fallback(alt, fallback.When(nil), fallback.WhenResult(onString)).
		Hedge(hedge.Delay(time.Second), hedge.Final[int](onString)).
		Hedge(hedge.Clone[string, int](func(s string) string { return s }))
}
`)
	for _, want := range []string{
		"breaker.Classify(onString) (value of func type breaker.Option[string])",
		"breaker.Exclude(onString) (value of func type breaker.Option[string])",
		"fallback.WhenResult(onString) (value of func type fallback.Option[string])",
		"hedge.Final[int](onString) (value of func type hedge.Option[int, string])",
		"(value of func type hedge.Option[string, int])",
	} {
		assert.Contains(t, out, want)
	}
	assert.Equal(t, 5, strings.Count(out, "cannot use "), "the five callbacks and nothing else: a Setting fits every stack\n%s", out)
}
