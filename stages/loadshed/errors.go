package loadshed

import (
	"errors"
	"fmt"

	"github.com/troupe-go/troupe"
)

// ErrOverloaded is the outcome of a call shed because the service below the
// LoadShed stage was not ready. It is returned as is, so
// errors.Is(err, ErrOverloaded) and err == ErrOverloaded both hold.
var ErrOverloaded = errors.New("loadshed: service overloaded")

// ErrBadCapacity is matched by the error for a negative capacity or one above actors.MaxCapacity; it matches
// troupe.ErrBadConfig.
var ErrBadCapacity = fmt.Errorf("%w: loadshed capacity must be between 0 (no limit of its own) and actors.MaxCapacity", troupe.ErrBadConfig)
