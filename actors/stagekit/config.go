package stagekit

import (
	"fmt"

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
}

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
