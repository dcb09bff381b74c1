package stagekit

import "time"

// Clock reads the time with one monotonic clock reading instead of the two
// (wall and monotonic) of time.Now (see docs/decisions.md for what that
// saves): a stage that stamps every request uses it. Its wall clock is the
// base's plus the monotonic time elapsed, so it does not follow wall-clock
// steps, which a timer should not either. Make it where the stage is made
// (inside a synctest bubble, in tests): it reads that goroutine's clock. A
// Clock is a value, safe for concurrent use.
type Clock struct{ base time.Time }

// NewClock returns a clock based now.
func NewClock() Clock { return Clock{base: time.Now()} }

// Now returns the current time.
func (c Clock) Now() time.Time { return c.At(c.Elapsed()) }

// Elapsed returns the time since the clock's base: Now as an offset (see
// At), without making the time.Time.
func (c Clock) Elapsed() time.Duration { return time.Since(c.base) }

// Offset returns t as a duration since the clock's base: with At, a time in
// 8 bytes instead of a time.Time's 24, for a value made per request.
func (c Clock) Offset(t time.Time) time.Duration { return t.Sub(c.base) }

// At returns the time off after the clock's base (the inverse of Offset:
// c.At(c.Offset(t)) is t, to the nanosecond, monotonic reading included).
// An offset made by adding a duration to Elapsed must be added without
// wrapping (package internal/sat's Add): a deadline math.MaxInt64 away is
// then the latest time At gives, never one in the past.
func (c Clock) At(off time.Duration) time.Time { return c.base.Add(off) }
