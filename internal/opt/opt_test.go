package opt_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

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
	assert.EqualError(t, err, "thing: option 2 of 3 is nil: troupe: bad configuration")
	assert.Equal(t, []int{1}, c.n, "nothing after the nil one")
}
