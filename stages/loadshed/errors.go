package loadshed

import (
	"errors"
)

// ErrOverloaded is the outcome of a call shed because the service below the
// LoadShed stage was not ready. It is returned as is, so
// errors.Is(err, ErrOverloaded) and err == ErrOverloaded both hold.
var ErrOverloaded = errors.New("loadshed: service overloaded")
