package troupe_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/troupe-go/troupe"
)

type codeErr struct{ code int }

func (e *codeErr) Error() string { return fmt.Sprintf("code %d", e.code) }

// spec: EG12
func TestAPermanentErrorMatchesErrPermanentAndWhatItMarks(t *testing.T) {
	cause := &codeErr{code: 400}
	err := troupe.Permanent(fmt.Errorf("send: %w", cause))
	assert.ErrorIs(t, err, troupe.ErrPermanent)
	assert.ErrorIs(t, err, cause)
	var ce *codeErr
	assert.ErrorAs(t, err, &ce)
	assert.Equal(t, 400, ce.code)
	var pe *troupe.PermanentError
	assert.ErrorAs(t, err, &pe)
	assert.EqualError(t, err, "send: code 400", "the message is the marked error's")
	assert.ErrorIs(t, fmt.Errorf("wrapped again: %w", err), troupe.ErrPermanent)
	assert.NoError(t, troupe.Permanent(nil))
	assert.False(t, errors.Is(cause, troupe.ErrPermanent), "an unmarked error is not permanent")
}
