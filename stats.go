package troupe

// Stats is a snapshot of one stage: its slots and, where the stage has
// them, counters of its own. Its fields are read one by one, so under load
// they may not add up exactly. It is a plain value.
type Stats struct {
	// Name is the stage's name: its kind ("limit", "timeout", ...) or the
	// name given to it in its stack.
	Name string
	// Capacity is the most requests the stage holds at once: its slots.
	Capacity int
	// Used counts the slots reserved, queued or held.
	Used int
	// Queued counts the requests waiting for the stage's actor.
	Queued int
	// Waiting counts the callers waiting for a slot.
	Waiting int
	// Detail is the stage's own snapshot, where it has one: a retry's
	// retry.Sessions, a rate limiter's ratelimit.Snapshot, a reconnect's
	// reconnect.Counters.
	Detail any
}

// StageInfo is what a stage tells about itself: its name and a snapshot.
// Every stage type of troupe has it; Stack uses it to report its stages.
//
// Implementations must be safe for concurrent use.
type StageInfo interface {
	Name() string
	Stats() Stats
}
