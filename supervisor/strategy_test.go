package supervisor_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/backoff"
	"github.com/troupe-go/troupe/supervisor"
)

// spec: SUP1, SUP2
func TestSUP1_SUP2_BackoffGrowsThenIntensityStops(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		delays, err := backoff.New(time.Second, 120*time.Second, backoff.WithMultiplier(1.6))
		require.NoError(t, err)
		b, err := supervisor.NewBackoff(delays, 4, time.Minute)
		require.NoError(t, err)
		rs := &failures{}
		var got []actors.Decision
		for range 5 {
			rs.Fail()
			d := b.Decide(rs.Of("boom"))
			got = append(got, d)
			time.Sleep(d.Delay)
		}
		assert.Equal(t, []actors.Decision{
			{Directive: actors.Restart, Delay: time.Second},
			{Directive: actors.Restart, Delay: 1600 * time.Millisecond},
			{Directive: actors.Restart, Delay: 2560 * time.Millisecond},
			{Directive: actors.Restart, Delay: 4096 * time.Millisecond},
			{Directive: actors.Stop},
		}, got, "exponential (x1.6), then more than 4 failures in a minute stop the stage")
		assert.Equal(t, int64(4), b.Restarts())
		assert.Equal(t, int64(1), b.Stops())

		// A minute of calm and the count, and the delay, start over.
		rs2 := &failures{}
		rs2.Fail()
		time.Sleep(2 * time.Minute)
		rs2.Fail()
		assert.Equal(t, actors.Decision{Directive: actors.Restart, Delay: time.Second}, b.Decide(rs2.Of("again")))
	})
}
