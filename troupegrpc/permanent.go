package troupegrpc

import (
	"errors"

	"github.com/troupe-go/troupe"
)

// isPermanent reports whether err is marked with troupe.Permanent: no
// retry can cure it, so RetryOn never retries it and it answers its call
// (see flight).
func isPermanent(err error) bool { return errors.Is(err, troupe.ErrPermanent) }
