package main

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe/troupetest"
)

func TestMain(m *testing.M) { troupetest.Main(m) }

// Three rounds of a stack group (troupe against the channel chain) and a
// scenario group with metrics of its own, as go test -bench prints them,
// with a failure among them.
const raw = `goos: linux
goarch: amd64
pkg: github.com/troupe-go/troupe/bench
BenchmarkStack/seq/chanchain-2     	 1000	      100.0 ns/op	  0 B/op	  0 allocs/op
BenchmarkStack/seq/troupe-2        	 1000	      150.0 ns/op	 16 B/op	  1 allocs/op
BenchmarkOverload/100k-2           	    1	 5000 ns/op	 1000 peak-heap-B	 100000 outcomes
BenchmarkOverload/1M-2             	    1	 9000 ns/op	 1050 peak-heap-B	 1000000 outcomes
BenchmarkStack/seq/chanchain-2     	 1000	      200.0 ns/op	  0 B/op	  0 allocs/op
BenchmarkStack/seq/troupe-2        	 1000	      240.0 ns/op	 16 B/op	  1 allocs/op
BenchmarkStack/seq/chanchain-2     	 1000	      100.0 ns/op	  0 B/op	  0 allocs/op
BenchmarkStack/seq/troupe-2        	 1000	      110.0 ns/op	 16 B/op	  1 allocs/op
--- FAIL: BenchmarkOverload/1M
    overload_test.go:99: a duplicate outcome
FAIL
`

// spec: REL5
func TestParseGroupsVariantsByRoundAndKeepsTheFailures(t *testing.T) {
	d := parse(strings.NewReader(raw))
	assert.Equal(t, []string{"Stack/seq", "Overload"}, d.order)
	st := d.groups["Stack/seq"]
	require.NotNil(t, st)
	assert.Equal(t, []string{"chanchain", "troupe"}, st.vorder)
	assert.Equal(t, []string{"ns/op", "B/op", "allocs/op"}, st.units)
	assert.Equal(t, []float64{150, 240, 110}, st.variants["troupe"]["ns/op"])
	ov := d.groups["Overload"]
	require.NotNil(t, ov)
	assert.Equal(t, []string{"ns/op", "peak-heap-B", "outcomes"}, ov.units)
	assert.Equal(t, []string{"--- FAIL: BenchmarkOverload/1M", "FAIL"}, d.fails)
}

// The ratio to a peer is the median of the ratios of the same round, so a
// round where the machine ran slow for both does not move it; without a
// value in every round it is the ratio of the medians.
//
// spec: REL5
func TestRatiosPairTheRoundsOfTheSameRun(t *testing.T) {
	d := parse(strings.NewReader(raw))
	// Rounds 1.5, 1.2 and 1.1: 1.2, where the ratio of the medians would
	// say 1.5 (150 over 100).
	assert.InDelta(t, 1.2, d.rat("Stack/seq", "troupe", "chanchain", "ns/op"), 1e-9)
	assert.InDelta(t, 150, d.med("Stack/seq", "troupe", "ns/op"), 1e-9)
	assert.InDelta(t, 1.05, d.rat("Overload", "1M", "100k", "peak-heap-B"), 1e-9)
	assert.True(t, math.IsNaN(d.rat("Stack/seq", "troupe", "direct", "ns/op")), "no such reference")
	assert.True(t, math.IsNaN(d.med("Nothing", "troupe", "ns/op")))
	assert.InDelta(t, 3.0, paired([]float64{2, 4}, []float64{1, 1, 1}), 1e-9, "uneven rounds: 3 over 1")
	assert.InDelta(t, 1.0, paired([]float64{2, 4}, []float64{2, 4}), 1e-9)
	assert.InDelta(t, 2.5, median([]float64{4, 1, 3, 2}), 1e-9)
	assert.True(t, math.IsNaN(median(nil)))
	assert.InDelta(t, 200.0/3, iqr([]float64{5, 1, 4, 2, 3}), 1e-9, "(4 - 2) over the median 3")
	assert.True(t, math.IsNaN(iqr([]float64{1, 2, 3})), "too few rounds for quartiles")
}

// The table has a ratio column per reference present in a group, and the
// group's own metrics, as ratios to the metric reference where it has one.
//
// spec: REL5
func TestTheTableShowsMediansRatiosAndMetrics(t *testing.T) {
	var out bytes.Buffer
	printTables(&out, parse(strings.NewReader(raw)), []string{"chanchain", "direct"}, "100k")
	got := out.String()
	assert.Contains(t, got, "Stack/seq (medians of 3 rounds; ratios of ns/op against chanchain)")
	assert.Contains(t, got, "| variant | ns/op | IQR | B/op | allocs/op | vs chanchain |")
	assert.Contains(t, got, "| troupe | 150 | - | 16 | 1 | 1.20x |")
	assert.Contains(t, got, "| chanchain | 100 | - | 0 | 0 | 1.00x |")
	assert.Contains(t, got, "Overload (medians of 1 rounds; metrics as ratios to 100k)")
	assert.Contains(t, got, "| 1M | 9000 | - | - | - | 1050 (1.05x) | 1000000 (10.00x) |")
	assert.NotContains(t, got, "vs direct", "no column for a reference the group lacks")
}

// The targets are checked against the medians, met or not, and a target
// the run did not measure is left out.
//
// spec: REL5
func TestTheTargetsAreMetOrNotAndUnmeasuredOnesLeftOut(t *testing.T) {
	var out bytes.Buffer
	printTargets(&out, parse(strings.NewReader(raw)))
	got := out.String()
	assert.Contains(t, got, "| stack, 1 caller: troupe vs chanchain | <= 1.25x | 1.20x | met |")
	assert.Contains(t, got, "| stack: allocations per request through the 4-stage stack (1 caller) | <= 2 | 1 | met |")
	assert.Contains(t, got, "| overload: peak heap, 1M requests vs 100k (each after a 100k warm-up) | <= 1.10x | 1.05x | met |")
	assert.Contains(t, got, "| 1000000 | 1000000 | met |")
	assert.NotContains(t, got, "64 callers", "Stack/par64 was not measured")

	slow := strings.NewReplacer("150.0 ns/op", "400.0 ns/op", "240.0 ns/op", "800.0 ns/op", "110.0 ns/op", "300.0 ns/op").Replace(raw)
	out.Reset()
	printTargets(&out, parse(strings.NewReader(slow)))
	assert.Contains(t, out.String(), "| stack, 1 caller: troupe vs chanchain | <= 1.25x | 4.00x | not met |")
}

func TestNumbersAreFormattedByMagnitude(t *testing.T) {
	assert.Equal(t, "1234", num(1234.4))
	assert.Equal(t, "12.3", num(12.34))
	assert.Equal(t, "1.23", num(1.234))
	assert.Equal(t, "-", num(math.NaN()))
	assert.Equal(t, "0.050x", ratio(0.05))
	assert.Equal(t, "1.50x", ratio(1.5))
	assert.Equal(t, "-", pct(math.NaN()))
	assert.Equal(t, "12%", pct(12.4))
}
