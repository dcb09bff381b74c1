package troupe

import "errors"

// ErrPermanent is matched by an error marked with Permanent: a failure no
// retry can cure (a request the downstream can never accept, a certificate
// it will never trust). The retry policies troupe ships stop at it.
var ErrPermanent = errors.New("troupe: permanent error")

// Permanent marks err as permanent: the error returned matches
// ErrPermanent with errors.Is and unwraps to err, so err's own sentinels
// and types still match. Permanent(nil) is nil.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return &PermanentError{Err: err}
}

// PermanentError is an error marked with Permanent. It matches
// ErrPermanent and unwraps to Err.
//
// A plain value, safe for concurrent use.
type PermanentError struct {
	Err error
}

func (e *PermanentError) Error() string { return e.Err.Error() }

// Is reports whether target is ErrPermanent.
func (e *PermanentError) Is(target error) bool { return target == ErrPermanent }

// Unwrap returns the error marked permanent.
func (e *PermanentError) Unwrap() error { return e.Err }
