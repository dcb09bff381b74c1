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

// ErrBadCapacity is matched by the error for a capacity below 1 or above
// actors.MaxCapacity; it matches troupe.ErrBadConfig. A LoadShed's capacity
// is what it sheds by: 0 does not mean "no limit of its own", as for other
// stages (such a LoadShed would never shed), nor "shed whenever the inner
// service is not ready" (one request always waits in the stage as it
// crosses it): it is this error.
var ErrBadCapacity = fmt.Errorf("%w: loadshed capacity must be between 1 and actors.MaxCapacity", troupe.ErrBadConfig)
