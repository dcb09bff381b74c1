package main

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/troupe-go/troupe/troupetest"
)

func TestMain(m *testing.M) { troupetest.Main(m) }

// The example's own checks are the test: the breaker opens during the
// outage, callers fail fast, only trial calls reach the server, and it
// closes again once the server is back.
//
// spec: CB1, CB2, CB3
func TestCB2_BreakerExampleFailsFastDuringTheOutage(t *testing.T) {
	var out bytes.Buffer
	cfg := config{before: 300 * time.Millisecond, outage: time.Second, after: time.Second,
		callers: 4, pace: 10 * time.Millisecond, openDelay: 200 * time.Millisecond, timeout: time.Second}
	if err := run(context.Background(), &out, cfg); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	m := regexp.MustCompile(`summary: states (\S+); breaker now (\S+), (\d+) refused`).FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("no summary:\n%s", out.String())
	}
	states := strings.Split(m[1], ",")
	if states[0] != "open" || states[len(states)-1] != "closed" || m[2] != "closed" {
		t.Errorf("states %v, now %s: want open first and closed at the end\n%s", states, m[2], out.String())
	}
}

func TestBadFlags(t *testing.T) {
	err := run(context.Background(), &bytes.Buffer{}, config{before: time.Second, outage: time.Second, after: time.Millisecond,
		callers: 1, openDelay: time.Second, timeout: time.Second})
	if err == nil || !strings.Contains(err.Error(), "-after") {
		t.Fatalf("want a flag error about -after, got %v", err)
	}
}
