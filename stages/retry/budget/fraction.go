package budget

import "math"

// maxDen bounds the denominator of the fraction a ratio is read as.
const maxDen = 1_000_000

// fraction returns p/q, the fraction nearest r (0 <= r <= 1000) whose
// denominator q is at most maxDen: 0.2 is 1/5, 0.6 is 3/5, 1/3.0 is 1/3.
// It walks r's continued fraction, whose convergents are the best
// approximations, and ends with the best semiconvergent that fits; the
// denominators grow at least as fast as Fibonacci's numbers, so it takes
// some thirty steps at most.
func fraction(r float64) (p, q int64) {
	h0, h1 := int64(0), int64(1) // numerators of the last two convergents
	k0, k1 := int64(1), int64(0) // their denominators
	x := r
	for {
		a := math.Floor(x)
		if k1 > 0 && a > float64((maxDen-k0)/k1) {
			t := (maxDen - k0) / k1 // the largest step whose denominator fits
			hs, ks := t*h1+h0, t*k1+k0
			if math.Abs(r-float64(hs)/float64(ks)) < math.Abs(r-float64(h1)/float64(k1)) {
				return hs, ks
			}
			return h1, k1
		}
		n := int64(a)
		h0, h1 = h1, n*h1+h0
		k0, k1 = k1, n*k1+k0
		f := x - a
		if f == 0 {
			return h1, k1
		}
		x = 1 / f
	}
}
