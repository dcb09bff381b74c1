package balance

import (
	"errors"

	"github.com/troupe-go/troupe"
)

// ErrNoneReady is matched, together with the context's error, by the error
// of a Reserve that gave up waiting for an endpoint: none was ready (or
// the balancer had none at all) before its context ended.
var ErrNoneReady = errors.New("balance: no endpoint ready")

// closedErr is the error of a Reserve on a closed balancer.
func closedErr() error { return &troupe.ClosedError{Service: "balance"} }
