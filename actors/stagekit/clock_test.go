package stagekit_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/troupe-go/troupe/actors/stagekit"
)

// A time kept as an offset (what a stage's per-request context stores to
// stay small) comes back exactly, monotonic reading included, and an
// offset taken from Elapsed is the time Now would have read.
func TestClockOffsetRoundTripsExactly(t *testing.T) {
	c := stagekit.NewClock()
	for _, d := range []time.Duration{0, time.Nanosecond, 10 * time.Second, -time.Hour, 100 * 365 * 24 * time.Hour} {
		at := c.Now().Add(d)
		back := c.At(c.Offset(at))
		assert.Equal(t, at, back, "the time itself, wall and monotonic readings")
		assert.True(t, back.Equal(at))
	}
	before := c.Now()
	at := c.At(c.Elapsed())
	after := c.Now()
	assert.False(t, at.Before(before), "Elapsed reads the clock now")
	assert.False(t, at.After(after), "Elapsed reads the clock now")
}
