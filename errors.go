package troupe

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors of the contract. Every error troupe makes is one of these,
// one of the error types below, or a stage package's own sentinel; all of
// them work with errors.Is and errors.As and wrap their cause.
var (
	// ErrPermitUsed is returned by a second Call or Release of a Permit, or a
	// Call after Release. The inner service is never reached.
	ErrPermitUsed = errors.New("troupe: permit already used or released")
	// ErrInvalidPermit is returned by Call or Release of a nil or zero Permit,
	// one that no Service issued.
	ErrInvalidPermit = errors.New("troupe: invalid permit: not issued by a service")
	// ErrClosed is matched by every error of a closed service: reserving on
	// it, calling a permit it issued, or a request it accepted but could not
	// complete. The error returned is a *ClosedError that says why.
	ErrClosed = errors.New("troupe: service closed")
	// ErrRestarted is matched by the error a request gets when the stage
	// holding it failed and was restarted; the error is a *RestartError.
	ErrRestarted = errors.New("troupe: stage restarted")
	// ErrBadConfig is matched by every configuration error: a capacity the
	// stage cannot hold, a nil system, service, function or policy, an option
	// out of range. Such errors come from the constructors and Build, never
	// later from a call.
	ErrBadConfig = errors.New("troupe: bad configuration")
	// ErrFull is matched by the error of a reservation that never waits
	// (a stage's TryReserve) when the service has no capacity free now.
	ErrFull = errors.New("troupe: no capacity free now")
	// ErrPanic is matched by a *PanicError: a panic recovered in a stage or
	// in the function of a leaf service.
	ErrPanic = errors.New("troupe: panic recovered")
	// ErrPermanent is matched by an error marked with Permanent: one no
	// retry can cure. Every retry and hedge policy troupe ships stops at it.
	ErrPermanent = errors.New("troupe: permanent error")
)

// Permanent marks err as an error no retry can cure (a request the server
// refuses outright, a bad certificate, too many redirects), as
// cenkalti/backoff's Permanent does: the retry and hedge policies troupe
// ships end the call with it at once, whatever else they would retry. The
// result matches ErrPermanent and, with errors.Is and errors.As, everything
// err matches; its message is err's. Permanent(nil) is nil.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return &PermanentError{Err: err}
}

// PermanentError is an error marked with Permanent. It matches
// ErrPermanent and unwraps to the error it marks.
//
// A plain value, safe for concurrent use.
type PermanentError struct {
	Err error
}

func (e *PermanentError) Error() string { return e.Err.Error() }

// Is reports whether target is ErrPermanent.
func (e *PermanentError) Is(target error) bool { return target == ErrPermanent }

// Unwrap returns the error it marks.
func (e *PermanentError) Unwrap() error { return e.Err }

// ClosedError reports that a service is closed, and why. It matches
// ErrClosed and unwraps to the cause (nil when closed on purpose).
//
// A plain value, safe for concurrent use.
type ClosedError struct {
	// Service names the closed stage or service.
	Service string
	// Cause is what closed it: nil for a deliberate Close, otherwise the
	// failure (a *PanicError, an inner readiness error, ...).
	Cause error
}

func (e *ClosedError) Error() string {
	if e.Cause == nil {
		return fmt.Sprintf("troupe: %s: service closed", e.Service)
	}
	return fmt.Sprintf("troupe: %s: service closed: %v", e.Service, e.Cause)
}

// Is reports whether target is ErrClosed.
func (e *ClosedError) Is(target error) bool { return target == ErrClosed }

// Unwrap returns the cause.
func (e *ClosedError) Unwrap() error { return e.Cause }

// RestartError is the outcome of a request that a stage held when the stage
// failed and was restarted by its supervisor. It matches ErrRestarted and
// unwraps to the failure (usually a *PanicError).
//
// A plain value, safe for concurrent use.
type RestartError struct {
	Stage string
	Cause error
}

func (e *RestartError) Error() string {
	return fmt.Sprintf("troupe: %s: stage restarted after failure: %v", e.Stage, e.Cause)
}

// Is reports whether target is ErrRestarted.
func (e *RestartError) Is(target error) bool { return target == ErrRestarted }

// Unwrap returns the failure that caused the restart.
func (e *RestartError) Unwrap() error { return e.Cause }

// PanicError is a panic recovered in a stage or a leaf function. It matches
// ErrPanic, and unwraps to the panic value when that value is an error.
//
// A plain value, safe for concurrent use.
type PanicError struct {
	// Where names the stage or service that panicked.
	Where string
	// Value is the value passed to panic.
	Value any
	// Stack is the goroutine stack at the panic, for diagnosis.
	Stack []byte
}

func (e *PanicError) Error() string {
	return fmt.Sprintf("troupe: %s: panic: %v", e.Where, e.Value)
}

// Is reports whether target is ErrPanic.
func (e *PanicError) Is(target error) bool { return target == ErrPanic }

// Unwrap returns the panic value when it is an error.
func (e *PanicError) Unwrap() error {
	err, _ := e.Value.(error)
	return err
}

// AbandonedError is the error of a stage's Close whose context ended while
// calls that entered by the stage still ran: their work's context was cancelled
// and their callers get a *ClosedError when it returns. It matches
// ErrClosed and unwraps to Close's context error.
//
// A plain value, safe for concurrent use.
type AbandonedError struct {
	// Stage names the closed stage.
	Stage string
	// Calls is how many calls still ran when Close gave up waiting.
	Calls int64
	// Cause is why Close stopped waiting: its context's error.
	Cause error
}

func (e *AbandonedError) Error() string {
	return fmt.Sprintf("troupe: %s: closed with %d calls still running (their work was told to stop): %v", e.Stage, e.Calls, e.Cause)
}

// Is reports whether target is ErrClosed.
func (e *AbandonedError) Is(target error) bool { return target == ErrClosed }

// Unwrap returns the cause.
func (e *AbandonedError) Unwrap() error { return e.Cause }

// ConfigError is the error of a constructor or Build refusing a
// configuration: it names who refused, the option or parameter, the value
// given and what the value must be. It matches ErrBadConfig and unwraps to
// its cause (nil when the value alone is wrong). Every configuration error
// troupe makes is one; errors.As finds it under the wrapping a constructor
// adds.
//
// A plain value, safe for concurrent use.
type ConfigError struct {
	// Stage is who refused: a stage's kind ("limit", "breaker") or a
	// constructor ("troupehttp.Client", "supervisor.New").
	Stage string
	// Option is the option or parameter refused ("Window", "capacity",
	// "option 2 of 3").
	Option string
	// Value is the value given; nil where there is none (a missing
	// function, a combination of options).
	Value any
	// Why says what is wrong with it, or what it must be.
	Why string
	// Err is the cause, when another error is why (a capacity the mailbox
	// refused, a bad nested option).
	Err error
}

func (e *ConfigError) Error() string {
	var b strings.Builder
	b.WriteString("troupe: ")
	if e.Stage != "" {
		b.WriteString(e.Stage)
		b.WriteString(": ")
	}
	b.WriteString("bad ")
	b.WriteString(e.Option)
	if e.Value != nil {
		fmt.Fprintf(&b, " %v", e.Value)
	}
	if e.Why != "" {
		b.WriteString(": ")
		b.WriteString(e.Why)
	}
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Is reports whether target is ErrBadConfig.
func (e *ConfigError) Is(target error) bool { return target == ErrBadConfig }

// Unwrap returns the cause.
func (e *ConfigError) Unwrap() error { return e.Err }
