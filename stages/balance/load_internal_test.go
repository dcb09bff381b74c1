package balance

import (
	"math"
	"testing"
	"time"
)

// The series weight uses for short times agrees with math.Exp.
func TestWeightAgreesWithExp(t *testing.T) {
	decay := 10 * time.Second
	for _, e := range []time.Duration{1, time.Microsecond, 37 * time.Microsecond, time.Millisecond, 9999 * time.Microsecond, 10 * time.Millisecond, time.Second, decay, time.Minute} {
		want := math.Exp(-float64(e) / float64(decay))
		if got := weight(e, decay); math.Abs(got-want) > 1e-13 {
			t.Errorf("weight(%v) = %v, want %v", e, got, want)
		}
	}
	if weight(0, decay) != 1 || weight(-time.Second, decay) != 1 {
		t.Error("no time, or a clock gone back, keeps the estimate")
	}
}
