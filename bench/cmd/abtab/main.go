// Command abtab compares two builds' `go test -bench` output, A (the base)
// and B, run in interleaved rounds (bench/ab.sh): for each benchmark, the
// medians of A and B, the median over rounds of B's figure over A's in the
// same round, with its interquartile range, and, where the benchmark's group
// holds a peer (-ref), the change of the same-run ratio: the median over
// rounds of B's figure over B's peer, divided by the same for A, and that
// change paired by round (the median over rounds of B's ratio to its peer
// over A's in the same round). The last two columns are the ones to quote
// on a shared machine: the peer, measured by the same binary in the same
// round, takes out most of the machine's drift; the paired one also keeps
// a round where the peer alone was slow or fast from leaking into the
// others.
//
//	go run ./cmd/abtab -a results/ab-a.txt -b results/ab-b.txt
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// line matches a result line: the name without its GOMAXPROCS suffix, and
// the ns/op figure.
var line = regexp.MustCompile(`^(Benchmark\S+?)(?:-\d+)?\s+\d+\s+([\d.]+) ns/op`)

// runs holds each benchmark's ns/op, one per round, in the order read, and
// the benchmarks in order of first appearance.
type runs struct {
	ns    map[string][]float64
	order []string
}

func parse(r io.Reader) (runs, error) {
	out := runs{ns: map[string][]float64{}}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		m := line.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		v, err := strconv.ParseFloat(m[2], 64)
		if err != nil {
			return out, fmt.Errorf("%q: %w", sc.Text(), err)
		}
		if _, ok := out.ns[m[1]]; !ok {
			out.order = append(out.order, m[1])
		}
		out.ns[m[1]] = append(out.ns[m[1]], v)
	}
	return out, sc.Err()
}

// quantile is the q-quantile of xs, interpolated between the sorted values
// around it.
func quantile(xs []float64, q float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	x := q * float64(len(s)-1)
	i := int(x)
	if i+1 == len(s) {
		return s[i]
	}
	return s[i] + (x-float64(i))*(s[i+1]-s[i])
}

func median(xs []float64) float64 { return quantile(xs, 0.5) }

// ratios returns num[i]/den[i] for the rounds both have.
func ratios(num, den []float64) []float64 {
	n := min(len(num), len(den))
	out := make([]float64, n)
	for i := range n {
		out[i] = num[i] / den[i]
	}
	return out
}

// peerOf returns the first of refs present in name's group, other than
// name itself, or "".
func peerOf(name string, refs []string, has func(string) bool) string {
	i := strings.LastIndex(name, "/")
	if i < 0 {
		return ""
	}
	for _, r := range refs {
		if p := name[:i+1] + r; p != name && has(p) {
			return p
		}
	}
	return ""
}

// row is one benchmark's comparison.
type row struct {
	name                     string
	rounds                   int
	a, b                     float64 // medians, ns/op
	ratio, lo, hi            float64 // B/A per round: median and interquartile range
	peer                     string  // "" when the group has none
	peerA, peerB, peerChange float64
	// The same change paired by round: the median over rounds of B's ratio
	// to its peer over A's in the same round (ABBA rounds put A and B side
	// by side), which a peer that drifted between rounds moves less.
	paired float64
}

func compare(a, b runs, refs []string) []row {
	var rows []row
	for _, name := range a.order {
		nb, ok := b.ns[name]
		if !ok {
			continue
		}
		na := a.ns[name]
		rs := ratios(nb, na)
		if len(rs) == 0 {
			continue
		}
		r := row{name: name, rounds: len(rs), a: median(na), b: median(nb),
			ratio: median(rs), lo: quantile(rs, 0.25), hi: quantile(rs, 0.75)}
		has := func(p string) bool { return len(a.ns[p]) > 0 && len(b.ns[p]) > 0 }
		if p := peerOf(name, refs, has); p != "" {
			r.peer = p[strings.LastIndex(p, "/")+1:]
			r.peerA, r.peerB = median(ratios(na, a.ns[p])), median(ratios(nb, b.ns[p]))
			r.peerChange = r.peerB / r.peerA
			r.paired = median(ratios(ratios(nb, b.ns[p]), ratios(na, a.ns[p])))
		}
		rows = append(rows, r)
	}
	return rows
}

func printRows(w io.Writer, rows []row) {
	fmt.Fprintln(w, "| benchmark | rounds | A ns/op | B ns/op | B/A per round (IQR) | peer | A/peer | B/peer | same-run change | paired by round |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---|---|---:|---:|---:|---:|")
	for _, r := range rows {
		peer := "| - | | | | |"
		if r.peer != "" {
			peer = fmt.Sprintf("| %s | %.3f | %.3f | %.3f | %.3f |", r.peer, r.peerA, r.peerB, r.peerChange, r.paired)
		}
		fmt.Fprintf(w, "| %s | %d | %.1f | %.1f | %.3f (%.2f-%.2f) %s\n",
			strings.TrimPrefix(r.name, "Benchmark"), r.rounds, r.a, r.b, r.ratio, r.lo, r.hi, peer)
	}
}

func load(path string) (runs, error) {
	f, err := os.Open(path)
	if err != nil {
		return runs{}, err
	}
	defer f.Close()
	return parse(f)
}

func main() {
	pa := flag.String("a", "results/ab-a.txt", "the base build's output")
	pb := flag.String("b", "results/ab-b.txt", "the other build's output")
	refs := flag.String("ref", "chanchain,chan,direct", "peer variants, first present in a group wins")
	flag.Parse()
	a, err := load(*pa)
	if err == nil {
		var b runs
		if b, err = load(*pb); err == nil {
			printRows(os.Stdout, compare(a, b, strings.Split(*refs, ",")))
			return
		}
	}
	fmt.Fprintln(os.Stderr, "abtab:", err)
	os.Exit(1)
}
