package main

import (
	"bytes"
	"context"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/troupe-go/troupe/troupetest"
)

func TestMain(m *testing.M) { troupetest.Main(m) }

func TestReconnectSummary(t *testing.T) {
	var out bytes.Buffer
	err := run(context.Background(), &out, config{tick: 20 * time.Millisecond, up: 300 * time.Millisecond, down: 600 * time.Millisecond, after: 800 * time.Millisecond,
		backoffMin: 20 * time.Millisecond, backoffMax: 100 * time.Millisecond})
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	m := regexp.MustCompile(`summary: (\d+) ok, (\d+) failed; states (\S+); (\d+) connects, (\d+) failures, (\d+) restarts`).FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("no summary:\n%s", out.String())
	}
	ok, _ := strconv.Atoi(m[1])
	failed, _ := strconv.Atoi(m[2])
	connects, _ := strconv.Atoi(m[4])
	failures, _ := strconv.Atoi(m[5])
	if ok == 0 || failed == 0 {
		t.Errorf("want successes before and after, failures while away: %d ok, %d failed\n%s", ok, failed, out.String())
	}
	if connects < 2 || failures < 1 {
		t.Errorf("want a reconnection: %d connects, %d failures\n%s", connects, failures, out.String())
	}
	states := strings.Split(m[3], ",")
	if states[0] != "Connecting" || states[len(states)-1] != "Connected" || !contains(states, "Idle") {
		t.Errorf("states %v: want Connecting first, Idle while away, Connected at the end", states)
	}
	if !strings.Contains(out.String(), "server is back") {
		t.Errorf("no restart of the server:\n%s", out.String())
	}
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}
