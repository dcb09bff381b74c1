package main

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
)

// summary is what the fleet did, as the server saw it.
type summary struct {
	cfg       config
	elapsed   time.Duration
	reports   []report
	arrivals  []arrival
	perSecond [][]int // [second][worker-1]: attempts at the server, from its first arrival
	maxWindow int     // most attempts in any window [t, t+per)
	windowAt  time.Duration
	// The outage, if there was one (from its start, from the first
	// arrival, to its end), and the most attempts in a window inside it.
	outageFrom, outageTo time.Duration
	outageAt             []int // the seconds of perSecond the outage touched
	outageMost, outageN  int
	hadOutage            bool
}

func summarize(cfg config, elapsed time.Duration, reports []report, arrivals []arrival, outStart, outEnd time.Time) summary {
	s := summary{cfg: cfg, elapsed: elapsed, reports: reports, arrivals: arrivals}
	if len(arrivals) == 0 {
		return s
	}
	t0 := arrivals[0].at
	if !outStart.IsZero() {
		if outEnd.IsZero() {
			outEnd = arrivals[len(arrivals)-1].at.Add(time.Nanosecond) // it outlasted the run
		}
		s.hadOutage, s.outageFrom, s.outageTo = true, outStart.Sub(t0), outEnd.Sub(t0)
		var during []arrival
		for _, a := range arrivals {
			if !a.at.Before(outStart) && a.at.Before(outEnd) {
				during = append(during, a)
			}
		}
		s.outageN = len(during)
		s.outageMost, _ = mostInWindow(during, cfg.per)
	}
	for _, a := range arrivals {
		sec := int(a.at.Sub(t0) / cfg.per)
		for len(s.perSecond) <= sec {
			s.perSecond = append(s.perSecond, make([]int, cfg.workers))
		}
		if a.worker >= 1 && a.worker <= cfg.workers {
			s.perSecond[sec][a.worker-1]++
		}
	}
	var at time.Time
	s.maxWindow, at = mostInWindow(arrivals, cfg.per)
	s.windowAt = at.Sub(t0)
	return s
}

// mostInWindow is the most arrivals (in order) in any window [t, t+per),
// and where the first such window starts.
func mostInWindow(arrivals []arrival, per time.Duration) (most int, at time.Time) {
	j := 0
	for i := range arrivals {
		for j < len(arrivals) && arrivals[j].at.Sub(arrivals[i].at) < per {
			j++
		}
		if j-i > most {
			most, at = j-i, arrivals[i].at
		}
	}
	return most, at
}

// inOutage reports whether the period sec..sec+1 of perSecond overlaps
// the outage.
func (s summary) inOutage(sec int) bool {
	from, to := time.Duration(sec)*s.cfg.per, time.Duration(sec+1)*s.cfg.per
	return s.hadOutage && from < s.outageTo && to > s.outageFrom
}

// failed is how many requests failed, over all workers.
func (s summary) failed() int {
	n := 0
	for _, r := range s.reports {
		n += r.Failed
	}
	return n
}

func (s summary) print(w io.Writer) {
	fmt.Fprintf(w, "\nsummary (%.1fs)\n", s.elapsed.Seconds())
	var ok, failed int
	for _, r := range s.reports {
		ok, failed = ok+r.OK, failed+r.Failed
		line := fmt.Sprintf("  worker %d: %d ok, %d failed", r.Worker, r.OK, r.Failed)
		if r.FirstErr != "" {
			line += " (first: " + r.FirstErr + ")"
		}
		fmt.Fprintln(w, line)
	}
	fmt.Fprintf(w, "requests: %d (ok %d, failed %d); attempts at the server: %d\n", s.cfg.workers*s.cfg.requests, ok, failed, len(s.arrivals))
	fmt.Fprintf(w, "attempts at the server per %v, from its first arrival:\n", s.cfg.per)
	head := "  second  "
	for i := range s.cfg.workers {
		head += fmt.Sprintf(" w%-2d", i+1)
	}
	fmt.Fprintln(w, head+"  all")
	for sec, counts := range s.perSecond {
		var b strings.Builder
		total := 0
		for _, c := range counts {
			fmt.Fprintf(&b, " %3d", c)
			total += c
		}
		mark := ""
		if total > s.cfg.rate {
			mark = "  OVER"
		}
		if s.inOutage(sec) {
			mark += "  (outage)"
		}
		fmt.Fprintf(w, "  %3d-%-3d %s  %3d%s\n", sec, sec+1, b.String(), total, mark)
	}
	fmt.Fprintf(w, "rate at the server: at most %d requests in any %v window, all workers together (limit %d; at +%.2fs)\n",
		s.maxWindow, s.cfg.per, s.cfg.rate, s.windowAt.Seconds())
	if s.hadOutage {
		fmt.Fprintf(w, "during the outage (+%.2fs to +%.2fs): %d requests at the server, at most %d in any %v window\n",
			s.outageFrom.Seconds(), s.outageTo.Seconds(), s.outageN, s.outageMost, s.cfg.per)
	}
	if err := s.verdict(); err != nil {
		fmt.Fprintln(w, "result: FAILED:", err)
		return
	}
	fmt.Fprintln(w, "result: ok")
}

// verdict says what did not go as configured.
func (s summary) verdict() error {
	var errs []error
	if s.maxWindow > s.cfg.rate {
		errs = append(errs, fmt.Errorf("the server saw %d requests in one %v window, over the shared limit of %d", s.maxWindow, s.cfg.per, s.cfg.rate))
	}
	if n := s.failed(); n > 0 {
		errs = append(errs, fmt.Errorf("%d of %d requests failed", n, s.cfg.workers*s.cfg.requests))
	}
	if len(s.reports) != s.cfg.workers {
		errs = append(errs, fmt.Errorf("%d of %d workers reported", len(s.reports), s.cfg.workers))
	}
	for _, r := range s.reports {
		if r.OK+r.Failed != s.cfg.requests {
			errs = append(errs, fmt.Errorf("worker %d: %d outcomes for %d requests", r.Worker, r.OK+r.Failed, s.cfg.requests))
		}
	}
	return errors.Join(errs...)
}
