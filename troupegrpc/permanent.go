package troupegrpc

import "errors"

// errPermanent is what marks an error no retry can cure: RetryOn never
// retries an error matching it, and one answers its call (see flight).
//
// MERGE: the root package's troupe.ErrPermanent (what troupe.Permanent
// marks errors with) is on another branch; once both are on one base,
// this becomes `var errPermanent = troupe.ErrPermanent` and nothing else
// changes. Until then nothing outside this package's tests makes errors
// that match it.
var errPermanent = errors.New("troupegrpc: permanent error")

// isPermanent reports whether err is marked permanent.
func isPermanent(err error) bool { return errors.Is(err, errPermanent) }
