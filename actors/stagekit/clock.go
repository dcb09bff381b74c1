package stagekit

import "time"

// Clock reads the time with one monotonic clock reading instead of the two
// (wall and monotonic) of time.Now (see ARCHITECTURE.md for what that
// saves): a stage that stamps every request uses it. Its wall clock is the
// base's plus the monotonic time elapsed, so it does not follow wall-clock
// steps, which a timer should not either. Make it where the stage is made
// (inside a synctest bubble, in tests): it reads that goroutine's clock. A
// Clock is a value, safe for concurrent use.
type Clock struct{ base time.Time }

// NewClock returns a clock based now.
func NewClock() Clock { return Clock{base: time.Now()} }

// Now returns the current time.
func (c Clock) Now() time.Time { return c.base.Add(time.Since(c.base)) }
