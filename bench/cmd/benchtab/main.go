// Command benchtab reads `go test -bench` output (several rounds of the same
// benchmarks) and prints, per group, each variant's median ns/op and
// allocs/op and its ratio to the group's reference variants measured in the
// same run. A group is a benchmark name up to its last "/"; the variant is
// what follows.
//
//	go test -bench . -benchmem | go run ./cmd/benchtab -ref chan
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

var line = regexp.MustCompile(`^Benchmark(\S+?)(?:-\d+)?\s+\d+\s+([\d.]+) ns/op(?:\s+([\d.]+) B/op\s+([\d.]+) allocs/op)?`)

type sample struct{ ns, allocs []float64 }

func main() {
	refs := flag.String("ref", "chan", "comma-separated reference variants; ratios are taken against the first present in a group")
	flag.Parse()
	groups, order := parse(os.Stdin)
	print(os.Stdout, groups, order, strings.Split(*refs, ","))
}

func parse(r io.Reader) (map[string]map[string]*sample, []string) {
	groups := map[string]map[string]*sample{}
	var order []string
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		m := line.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		name := m[1]
		group, variant := "", name
		if i := strings.LastIndex(name, "/"); i >= 0 {
			group, variant = name[:i], name[i+1:]
		}
		if groups[group] == nil {
			groups[group] = map[string]*sample{}
			order = append(order, group)
		}
		s := groups[group][variant]
		if s == nil {
			s = &sample{}
			groups[group][variant] = s
		}
		ns, _ := strconv.ParseFloat(m[2], 64)
		s.ns = append(s.ns, ns)
		if m[4] != "" {
			a, _ := strconv.ParseFloat(m[4], 64)
			s.allocs = append(s.allocs, a)
		}
	}
	return groups, order
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func print(w io.Writer, groups map[string]map[string]*sample, order, refs []string) {
	for _, g := range order {
		vs := groups[g]
		ref := ""
		for _, r := range refs {
			if vs[r] != nil {
				ref = r
				break
			}
		}
		fmt.Fprintf(w, "\n%s (ratios against %q, medians of %d rounds)\n", g, ref, roundsOf(vs))
		fmt.Fprintf(w, "| variant | ns/op | allocs/op | ratio |\n|---|---:|---:|---:|\n")
		names := make([]string, 0, len(vs))
		for n := range vs {
			names = append(names, n)
		}
		slices.Sort(names)
		for _, n := range names {
			s := vs[n]
			ratio := "-"
			if ref != "" {
				ratio = fmt.Sprintf("%.2fx", median(s.ns)/median(vs[ref].ns))
			}
			fmt.Fprintf(w, "| %s | %.0f | %.1f | %s |\n", n, median(s.ns), median(s.allocs), ratio)
		}
	}
}

func roundsOf(vs map[string]*sample) int {
	n := 0
	for _, s := range vs {
		n = max(n, len(s.ns))
	}
	return n
}
