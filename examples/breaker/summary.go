package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/troupe-go/troupe/stages/breaker"
)

var phases = [3]string{"before", "outage", "after"}

// report prints the summary and checks that the breaker did its job: it
// opened during the outage and refused calls there, it let only a few trial
// calls reach the server while open, and it closed again after.
func (t *tally) report(w io.Writer, end breaker.Snapshot) error {
	fmt.Fprintln(w, "phase    ok  failed  refused (fail fast)  server saw")
	for i, name := range phases {
		fmt.Fprintf(w, "%-7s %4d  %6d  %19d  %10d\n", name, t.ok[i].Load(), t.failed[i].Load(), t.refused[i].Load(), t.serverSeen[i])
	}
	if t.lastRefusal != nil {
		fmt.Fprintf(w, "a refused call's error: %v\n", t.lastRefusal)
	}
	fmt.Fprintf(w, "summary: states %s; breaker now %v, %d refused in all\n", strings.Join(t.transitions, ","), end.State, end.Refused)

	calls := t.ok[1].Load() + t.failed[1].Load() + t.refused[1].Load()
	var errs []error
	switch {
	case len(t.transitions) == 0 || t.transitions[0] != breaker.Open.String():
		errs = append(errs, errors.New("the breaker did not open during the outage"))
	case t.refused[1].Load() == 0:
		errs = append(errs, errors.New("no call failed fast during the outage"))
	case t.serverSeen[1]*2 > calls:
		errs = append(errs, fmt.Errorf("the server saw %d of the outage's %d calls: the breaker let too many through", t.serverSeen[1], calls))
	}
	if end.State != breaker.Closed {
		errs = append(errs, fmt.Errorf("the breaker is %v after the server recovered, want closed", end.State))
	}
	if t.ok[2].Load() == 0 {
		errs = append(errs, errors.New("no call succeeded after the server recovered"))
	}
	return errors.Join(errs...)
}
