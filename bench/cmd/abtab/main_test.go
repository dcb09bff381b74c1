package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe/troupetest"
)

func TestMain(m *testing.M) { troupetest.Main(m) }

// Two builds over three rounds: B's stage is 10 % slower in ns, but the
// machine was 10 % slower in B's rounds too (its peer says so), so the
// same-run change is 1.00; the stack has no peer in its output.
func TestCompareTakesThePeersOfTheSameRound(t *testing.T) {
	a := `goos: linux
BenchmarkStage/chan-2     	 1000	      100.0 ns/op	  0 B/op
BenchmarkStage/limit-2    	 1000	       80.0 ns/op	  0 B/op
BenchmarkStack/seq/troupe-2 	 1000	 1000 ns/op
BenchmarkStage/chan-2     	 1000	      200.0 ns/op
BenchmarkStage/limit-2    	 1000	      160.0 ns/op
BenchmarkStack/seq/troupe-2 	 1000	 1100 ns/op
BenchmarkStage/chan-2     	 1000	      100.0 ns/op
BenchmarkStage/limit-2    	 1000	       80.0 ns/op
BenchmarkStack/seq/troupe-2 	 1000	 900 ns/op
`
	b := strings.NewReplacer("100.0 ns", "110.0 ns", "80.0 ns", "88.0 ns", "200.0 ns", "220.0 ns", "160.0 ns", "176.0 ns",
		"1000 ns", "1200 ns").Replace(a)
	ra, err := parse(strings.NewReader(a))
	require.NoError(t, err)
	rb, err := parse(strings.NewReader(b))
	require.NoError(t, err)
	rows := compare(ra, rb, []string{"chanchain", "chan"})
	require.Len(t, rows, 3)

	limit := rows[1]
	assert.Equal(t, "BenchmarkStage/limit", limit.name)
	assert.Equal(t, 3, limit.rounds)
	assert.InDelta(t, 80, limit.a, 1e-9)
	assert.InDelta(t, 88, limit.b, 1e-9)
	assert.InDelta(t, 1.1, limit.ratio, 1e-9)
	assert.Equal(t, "chan", limit.peer)
	assert.InDelta(t, 0.8, limit.peerA, 1e-9)
	assert.InDelta(t, 1.0, limit.peerChange, 1e-9)
	assert.InDelta(t, 1.0, limit.paired, 1e-9)

	stack := rows[2]
	assert.Equal(t, "", stack.peer, "no chanchain in the stack's group")
	assert.InDelta(t, 1000, stack.a, 1e-9)
	assert.InDelta(t, 1100, stack.b, 1e-9, "one round changed: 1000 -> 1200")

	assert.InDelta(t, 2.5, quantile([]float64{4, 1, 3, 2}, 0.5), 1e-9)
	assert.InDelta(t, 1.75, quantile([]float64{4, 1, 3, 2}, 0.25), 1e-9)
	assert.InDelta(t, 4, quantile([]float64{4, 1, 3, 2}, 1), 1e-9)

	var out bytes.Buffer
	printRows(&out, rows)
	assert.Contains(t, out.String(), "| Stage/limit | 3 | 80.0 | 88.0 | 1.100 (1.10-1.10) | chan | 0.800 | 0.800 | 1.000 | 1.000 |")
}

// The paired change follows each round: B's limit is 5 % slower than A's
// beside the same peer in two rounds of three and 20 % faster in the
// third; paired round by round the median is 1.05, while the ratio of the
// medians (the same-run change) mixes rounds and reads 0.955.
func TestPairedChangeComparesRoundByRound(t *testing.T) {
	a := "BenchmarkStage/chan-2 1 100 ns/op\nBenchmarkStage/limit-2 1 100 ns/op\n" +
		"BenchmarkStage/chan-2 1 100 ns/op\nBenchmarkStage/limit-2 1 110 ns/op\n" +
		"BenchmarkStage/chan-2 1 100 ns/op\nBenchmarkStage/limit-2 1 120 ns/op\n"
	b := "BenchmarkStage/chan-2 1 100 ns/op\nBenchmarkStage/limit-2 1 105 ns/op\n" +
		"BenchmarkStage/chan-2 1 100 ns/op\nBenchmarkStage/limit-2 1 115.5 ns/op\n" +
		"BenchmarkStage/chan-2 1 100 ns/op\nBenchmarkStage/limit-2 1 96 ns/op\n"
	ra, err := parse(strings.NewReader(a))
	require.NoError(t, err)
	rb, err := parse(strings.NewReader(b))
	require.NoError(t, err)
	rows := compare(ra, rb, []string{"chan"})
	require.Len(t, rows, 2)
	assert.InDelta(t, 1.05, rows[1].paired, 1e-9)
	assert.InDelta(t, 1.05/1.1, rows[1].peerChange, 1e-9)
}
