// Command benchtab reads `go test -bench` output (several rounds of the same
// benchmarks) and prints, per group, each variant's medians and its ratios
// to the group's reference variants measured in the same run, then the
// issue's targets, each met or not.
//
// A group is a benchmark name up to its last "/"; the variant is what
// follows. For every group, a ratio column is printed for each reference
// variant (-ref) present in it: the variant's median ns/op over the
// reference's. Metrics a benchmark reports itself (b.ReportMetric: req/s,
// peak-heap-B, ...) get a column each; in a group that holds the -mref
// variant they are also shown as a ratio to it.
//
//	go test -bench . -benchmem | go run ./cmd/benchtab -ref chanchain,direct,chan
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// head matches a result line up to its iteration count; the rest of the line
// is value-unit pairs.
var head = regexp.MustCompile(`^Benchmark(\S+?)(?:-\d+)?\s+(\d+)\s+(.*)$`)

// sample holds one variant's values, per unit, one per round.
type sample map[string][]float64

// group is the variants of one benchmark group, in order of appearance, and
// the units their benchmarks reported, also in order.
type group struct {
	variants map[string]sample
	vorder   []string
	units    []string
}

type data struct {
	groups map[string]*group
	order  []string
	fails  []string
}

func main() {
	refs := flag.String("ref", "chanchain,direct,chan", "comma-separated reference variants: a ratio column for each one present in a group")
	mref := flag.String("mref", "100k", "reference variant for the ratios of reported metrics, in groups that hold it")
	targets := flag.Bool("targets", true, "print the issue's targets, met or not")
	flag.Parse()
	d := parse(os.Stdin)
	printTables(os.Stdout, d, strings.Split(*refs, ","), *mref)
	if *targets {
		printTargets(os.Stdout, d)
	}
	if len(d.fails) > 0 {
		fmt.Fprintf(os.Stdout, "\nFAILURES in the raw output:\n")
		for _, f := range d.fails {
			fmt.Fprintf(os.Stdout, "  %s\n", f)
		}
		os.Exit(1)
	}
}

func parse(r io.Reader) *data {
	d := &data{groups: map[string]*group{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		text := sc.Text()
		if strings.HasPrefix(text, "--- FAIL") || strings.HasPrefix(text, "FAIL") || strings.HasPrefix(text, "panic:") {
			d.fails = append(d.fails, text)
			continue
		}
		m := head.FindStringSubmatch(text)
		if m == nil {
			continue
		}
		name := m[1]
		gname, vname := "", name
		if i := strings.LastIndex(name, "/"); i >= 0 {
			gname, vname = name[:i], name[i+1:]
		}
		g := d.groups[gname]
		if g == nil {
			g = &group{variants: map[string]sample{}}
			d.groups[gname] = g
			d.order = append(d.order, gname)
		}
		s := g.variants[vname]
		if s == nil {
			s = sample{}
			g.variants[vname] = s
			g.vorder = append(g.vorder, vname)
		}
		f := strings.Fields(m[3])
		for i := 0; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				continue
			}
			unit := f[i+1]
			s[unit] = append(s[unit], v)
			if !slices.Contains(g.units, unit) {
				g.units = append(g.units, unit)
			}
		}
	}
	return d
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// iqr is the interquartile range over the median, in percent: how much the
// rounds disagree, ignoring the best and worst quarter.
func iqr(xs []float64) float64 {
	if len(xs) < 4 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	q := func(p float64) float64 {
		x := p * float64(len(s)-1)
		i := int(x)
		if i+1 >= len(s) {
			return s[i]
		}
		return s[i] + (x-float64(i))*(s[i+1]-s[i])
	}
	return 100 * (q(0.75) - q(0.25)) / median(xs)
}

// paired is the ratio of xs to refs: the median of the per-round ratios when
// both have a value for every round (each pair was measured in the same
// round, under the same noise), else the ratio of the medians.
func paired(xs, refs []float64) float64 {
	if len(xs) == len(refs) && len(xs) > 0 {
		r := make([]float64, len(xs))
		for i := range xs {
			r[i] = xs[i] / refs[i]
		}
		return median(r)
	}
	return median(xs) / median(refs)
}

// rat is variant v's paired ratio to variant ref in group g, for unit.
func (d *data) rat(g, v, ref, unit string) float64 {
	gr := d.groups[g]
	if gr == nil || gr.variants[v] == nil || gr.variants[ref] == nil {
		return math.NaN()
	}
	return paired(gr.variants[v][unit], gr.variants[ref][unit])
}

func (d *data) med(g, v, unit string) float64 {
	gr := d.groups[g]
	if gr == nil || gr.variants[v] == nil {
		return math.NaN()
	}
	return median(gr.variants[v][unit])
}

var std = []string{"ns/op", "B/op", "allocs/op"}

func printTables(w io.Writer, d *data, refs []string, mref string) {
	for _, gname := range d.order {
		g := d.groups[gname]
		var present []string
		for _, r := range refs {
			if g.variants[r] != nil {
				present = append(present, r)
			}
		}
		var extra []string
		for _, u := range g.units {
			if !slices.Contains(std, u) {
				extra = append(extra, u)
			}
		}
		hasMref := g.variants[mref] != nil
		rounds := 0
		for _, s := range g.variants {
			rounds = max(rounds, len(s["ns/op"]))
		}
		fmt.Fprintf(w, "\n%s (medians of %d rounds", gname, rounds)
		if len(present) > 0 {
			fmt.Fprintf(w, "; ratios of ns/op against %s", strings.Join(present, " and "))
		}
		if hasMref && len(extra) > 0 {
			fmt.Fprintf(w, "; metrics as ratios to %s", mref)
		}
		fmt.Fprintf(w, ")\n")

		cols := []string{"variant", "ns/op", "IQR", "B/op", "allocs/op"}
		align := []string{"---", "---:", "---:", "---:", "---:"}
		for _, r := range present {
			cols, align = append(cols, "vs "+r), append(align, "---:")
		}
		for _, u := range extra {
			cols, align = append(cols, u), append(align, "---:")
		}
		fmt.Fprintf(w, "| %s |\n|%s|\n", strings.Join(cols, " | "), strings.Join(align, "|"))
		for _, v := range g.vorder {
			s := g.variants[v]
			row := []string{v, num(median(s["ns/op"])), pct(iqr(s["ns/op"])), allocs(median(s["B/op"])), allocs(median(s["allocs/op"]))}
			for _, r := range present {
				row = append(row, ratio(paired(s["ns/op"], g.variants[r]["ns/op"])))
			}
			for _, u := range extra {
				cell := num(median(s[u]))
				if hasMref && v != mref {
					if ref := median(g.variants[mref][u]); ref != 0 && !math.IsNaN(ref) {
						cell += " (" + ratio(paired(s[u], g.variants[mref][u])) + ")"
					}
				}
				row = append(row, cell)
			}
			fmt.Fprintf(w, "| %s |\n", strings.Join(row, " | "))
		}
	}
}

// target is one of the issue's targets, checked against the medians.
type target struct {
	what     string
	value    func(d *data) float64
	format   string
	met      func(v float64) bool
	required string
}

var issueTargets = []target{
	{"stack, 1 caller: troupe vs chanchain",
		func(d *data) float64 { return d.rat("Stack/seq", "troupe", "chanchain", "ns/op") },
		"%.2fx", func(v float64) bool { return v <= 1.25 }, "<= 1.25x"},
	{"stack, 64 callers: troupe vs chanchain",
		func(d *data) float64 { return d.rat("Stack/par64", "troupe", "chanchain", "ns/op") },
		"%.2fx", func(v float64) bool { return v <= 1 }, "<= 1.00x"},
	{"stack: allocations per request through the 4-stage stack (1 caller)",
		func(d *data) float64 { return d.med("Stack/seq", "troupe", "allocs/op") },
		"%.0f", func(v float64) bool { return v <= 2 }, "<= 2"},
	{"stack: allocations per request through the 4-stage stack (64 callers)",
		func(d *data) float64 { return d.med("Stack/par64", "troupe", "allocs/op") },
		"%.0f", func(v float64) bool { return v <= 2 }, "<= 2"},
	{"slow downstream: troupe req/s vs the 20,000/s Little's-law bound",
		func(d *data) float64 { return d.med("Slow/par64", "troupe", "%nominal") },
		"%.1f %%", func(v float64) bool { return v >= 90 }, ">= 90 %"},
	{"slow downstream: troupe req/s vs limit / measured service time",
		func(d *data) float64 { return d.med("Slow/par64", "troupe", "%little") },
		"%.1f %%", func(v float64) bool { return v >= 90 }, ">= 90 %"},
	{"overload: peak heap, 1M requests vs 100k (each after a 100k warm-up)",
		func(d *data) float64 { return d.rat("Overload", "1M", "100k", "peak-heap-B") },
		"%.2fx", func(v float64) bool { return v <= 1.10 }, "<= 1.10x"},
	{"overload: peak live heap, 1M requests vs 100k",
		func(d *data) float64 { return d.rat("Overload", "1M", "100k", "peak-live-B") },
		"%.2fx", func(v float64) bool { return v <= 1.10 }, "<= 1.10x"},
	{"overload: 1M requests, distinct outcomes (the benchmark FAILs on a duplicate or a miss)",
		func(d *data) float64 { return d.med("Overload", "1M", "outcomes") },
		"%.0f", func(v float64) bool { return v == 1e6 }, "1000000"},
	{"10,000 idle supervised pipelines: heap + stacks in use",
		func(d *data) float64 { return d.med("Pipelines", "supervised", "MiB-inuse") },
		"%.1f MiB", func(v float64) bool { return v < 256 }, "< 256 MiB"},
	{"10,000 idle builder pipelines: heap + stacks in use",
		func(d *data) float64 { return d.med("Pipelines", "builder", "MiB-inuse") },
		"%.1f MiB", func(v float64) bool { return v < 256 }, "< 256 MiB"},
	{"10,000 supervised pipelines closed: in use left over",
		func(d *data) float64 { return d.med("Pipelines", "supervised", "MiB-inuse-closed") },
		"%.1f MiB", func(v float64) bool { return v < 10 }, "< 10 MiB (returned)"},
	{"10,000 builder pipelines closed: in use left over",
		func(d *data) float64 { return d.med("Pipelines", "builder", "MiB-inuse-closed") },
		"%.1f MiB", func(v float64) bool { return v < 10 }, "< 10 MiB (returned)"},
}

func printTargets(w io.Writer, d *data) {
	fmt.Fprintf(w, "\nTargets\n| target | wanted | measured | status |\n|---|---|---:|---|\n")
	for _, t := range issueTargets {
		v := t.value(d)
		if math.IsNaN(v) || math.IsInf(v, 0) {
			continue // not measured in this run
		}
		status := "not met"
		if t.met(v) {
			status = "met"
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s |\n", t.what, t.required, fmt.Sprintf(t.format, v), status)
	}
}

func num(v float64) string {
	switch {
	case math.IsNaN(v):
		return "-"
	case math.Abs(v) >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case math.Abs(v) >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	default:
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
}

func allocs(v float64) string {
	if math.IsNaN(v) {
		return "-"
	}
	return strconv.FormatFloat(v, 'f', 0, 64)
}

func pct(v float64) string {
	if math.IsNaN(v) {
		return "-"
	}
	return fmt.Sprintf("%.0f%%", v)
}

func ratio(r float64) string {
	if r < 0.1 {
		return fmt.Sprintf("%.3fx", r)
	}
	return fmt.Sprintf("%.2fx", r)
}
