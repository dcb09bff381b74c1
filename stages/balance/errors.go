package balance

import (
	"errors"
	"fmt"

	"github.com/troupe-go/troupe"
)

// ErrNoneReady is matched, together with the context's error, by the error
// of a Reserve that gave up waiting for an endpoint: none was ready (or
// the balancer had none at all) before its context ended.
var ErrNoneReady = errors.New("balance: no endpoint ready")

// ErrBadConfig is matched by New's error for a bad option's value, and
// for a source with a nil function or channel or an interval that is not
// positive; it matches troupe.ErrBadConfig (which a nil option's error
// matches too).
var ErrBadConfig = fmt.Errorf("balance: %w", troupe.ErrBadConfig)

// closedErr is the error of a Reserve on a closed balancer.
func closedErr() error { return &troupe.ClosedError{Service: "balance"} }
