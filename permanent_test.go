package troupe_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/troupe-go/troupe"
)

// An error marked permanent matches ErrPermanent and still matches what
// it wraps, through more wrapping too; nil stays nil.
func TestPermanentMarksAnErrorWithoutHidingIt(t *testing.T) {
	cause := errors.New("certificate signed by unknown authority")
	err := fmt.Errorf("dial: %w", troupe.Permanent(cause))
	assert.ErrorIs(t, err, troupe.ErrPermanent)
	assert.ErrorIs(t, err, cause)
	var pe *troupe.PermanentError
	assert.ErrorAs(t, err, &pe)
	assert.Same(t, cause, pe.Err)
	assert.Equal(t, "dial: "+cause.Error(), err.Error())
	assert.NotErrorIs(t, cause, troupe.ErrPermanent)
	assert.NoError(t, troupe.Permanent(nil))
}
