package stagekit

import (
	"fmt"
	"time"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/internal/mailbox"
)

// Config describes a stage to spawn.
//
// A plain value, read once by Spawn.
type Config struct {
	// Name names the stage in errors and in its actor's PID.
	Name string
	// Capacity is the number of slots in the stage's mailbox. 0 means the
	// stage sets no limit of its own (mailbox.MaxCapacity: the stage admits
	// whatever the stages outside it admit; an idle mailbox costs the same
	// whatever its capacity). Negative, or above mailbox.MaxCapacity, is an
	// error matching troupe.ErrBadConfig (see CheckCapacity).
	Capacity int
	// HoldUntilOutcome keeps a request's slot until its outcome is delivered,
	// instead of freeing it when the request is handed on: the stage's
	// capacity then bounds the requests in flight below it (a concurrency
	// limit).
	HoldUntilOutcome bool
	// CallerPath says that the behaviour forwards every request as it is
	// (its Request is Passthrough's, and it keeps nothing), or every
	// request its CallerAdmitter admits, so that while
	// the stage is in its ordinary state (nothing parked, queued, paused or
	// closing) a request crosses it on its caller's goroutine, its slot and
	// its frame taken as the actor would, without entering the actor.
	CallerPath bool
	// Inline is how many messages a sender that finds the stage idle may
	// process on its own goroutine (mailbox.Inline; default 32); -1 turns it
	// off, so that every message wakes the stage's own goroutine.
	Inline int
	// MaxWait bounds how long a caller waits in the stage's line for a
	// slot: a Reserve, a request in line for its first slot
	// (ReserveAndCall), or one the stage outside parked for this one. One
	// that waited MaxWait is refused with a *WaitError (it matches
	// troupe.ErrFull); a stage outside answers its parked request with it
	// and carries on. 0 waits as long as the caller does; negative is an
	// error matching troupe.ErrBadConfig. Waits on behalf of many (a
	// retry's or a hedge's line) are not bounded.
	MaxWait time.Duration
}

// WaitError is the refusal of a caller that waited a stage's MaxWait in
// its line for a slot. It matches troupe.ErrFull.
//
// A plain value, safe for concurrent use.
type WaitError struct {
	Stage   string        // the stage's name
	MaxWait time.Duration // how long the caller waited
}

func (e *WaitError) Error() string {
	return fmt.Sprintf("%s: no slot came within the maximum wait of %v", e.Stage, e.MaxWait)
}

// Is reports whether target is troupe.ErrFull.
func (e *WaitError) Is(target error) bool { return target == troupe.ErrFull }

// MaxCapacity is the largest stage capacity: mailbox.MaxCapacity.
const MaxCapacity = mailbox.MaxCapacity

// CheckCapacity validates a stage capacity the way every stage does: 0
// means no limit of its own and becomes mailbox.MaxCapacity; 1 to
// mailbox.MaxCapacity is kept; anything else is an error matching
// troupe.ErrBadConfig, never a different capacity.
func CheckCapacity(stage string, n int) (int, error) {
	switch {
	case n == 0:
		return mailbox.MaxCapacity, nil
	case n < 0 || n > mailbox.MaxCapacity:
		return 0, &troupe.ConfigError{Stage: stage, Option: "Capacity", Value: n, Why: fmt.Sprintf("not between 1 and %d (0 for no limit of its own)", mailbox.MaxCapacity)}
	}
	return n, nil
}
