package sat_test

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/troupe-go/troupe/internal/sat"
)

const maxD = time.Duration(math.MaxInt64)

// spec: EG5
func TestSumsAndProductsStopAtTheEndsOfTheRange(t *testing.T) {
	assert.Equal(t, maxD, sat.Add(maxD, time.Nanosecond))
	assert.Equal(t, maxD, sat.Add(time.Hour, maxD))
	assert.Equal(t, time.Duration(math.MinInt64), sat.Add(time.Duration(math.MinInt64), -time.Nanosecond))
	assert.Equal(t, maxD-time.Hour, sat.Add(maxD, -time.Hour))
	assert.Equal(t, 3*time.Second, sat.Add(time.Second, 2*time.Second))

	assert.Equal(t, maxD, sat.Mul(maxD/2+1, 2))
	assert.Equal(t, maxD, sat.Mul(time.Duration(1<<40), time.Duration(1<<40)))
	assert.Equal(t, 6*time.Second, sat.Mul(3, 2*time.Second))
	assert.Equal(t, time.Duration(0), sat.Mul(-3, time.Second))
	assert.Equal(t, int64(0), sat.Mul(int64(0), math.MaxInt64))

	assert.Equal(t, maxD, sat.Scale(maxD, 1))
	assert.Equal(t, maxD, sat.Scale(time.Hour, 1e300))
	assert.Equal(t, maxD, sat.Scale(time.Hour, math.Inf(1)))
	assert.Equal(t, time.Duration(math.MinInt64), sat.Scale(time.Hour, math.Inf(-1)))
	assert.Equal(t, time.Duration(0), sat.Scale(time.Hour, math.NaN()))
	assert.Equal(t, 90*time.Minute, sat.Scale(time.Hour, 1.5))
}
