package opt_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/internal/opt"
)

type config struct{ n []int }

type option func(*config)

func add(n int) option { return func(c *config) { c.n = append(c.n, n) } }

// spec: EG6
func TestOptionsApplyInOrderAndANilOneIsAnError(t *testing.T) {
	var c config
	assert.NoError(t, opt.Apply("thing", &c, []option{add(1), add(2)}))
	assert.Equal(t, []int{1, 2}, c.n)

	c = config{}
	err := opt.Apply("thing", &c, []option{add(1), nil, add(3)})
	assert.ErrorIs(t, err, troupe.ErrBadConfig)
	assert.EqualError(t, err, "troupe: thing: bad option 2 of 3: nil")
	assert.Equal(t, []int{1}, c.n, "nothing after the nil one")
}

// As gives back a function kept untyped as its own type, and says when it
// is another.
func TestAsTypesAFunctionKeptUntyped(t *testing.T) {
	f, ok := opt.As[func(int) bool](func(v int) bool { return v > 1 })
	require.True(t, ok)
	assert.True(t, f(2))
	f, ok = opt.As[func(int) bool](nil)
	assert.True(t, ok, "nil is the zero function")
	assert.Nil(t, f)
	_, ok = opt.As[func(int) bool](func(string) bool { return true })
	assert.False(t, ok, "a function of other types")
}
