package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/troupe-go/troupe/troupetest"
)

func TestMain(m *testing.M) { troupetest.Main(m) }

// The example's own checks are the test: no order without a key processed
// twice, the catalog's breaker open during the outage and closed after
// it, most requests answered 200; and the report has what an operator
// reads.
//
// spec: HT4 HT5 HT6 HT7
func TestTheGatewayKeepsItsPromisesUnderItsOwnLoad(t *testing.T) {
	var out bytes.Buffer
	cfg := config{duration: 2500 * time.Millisecond, clients: 16, outage: 800 * time.Millisecond,
		timeout: 200 * time.Millisecond, limit: 20, pace: 10 * time.Millisecond, openDelay: 150 * time.Millisecond}
	if err := run(context.Background(), &out, cfg); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	for _, want := range []string{"200 OK", "route", "p99", "retries", "shed", "catalog breaker closed -> open",
		"orders without a key processed twice: 0"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("no %q in the report:\n%s", want, out.String())
		}
	}
}

func TestBadFlags(t *testing.T) {
	err := run(context.Background(), &bytes.Buffer{}, config{duration: time.Second, clients: 1, outage: time.Second,
		timeout: time.Second, limit: 1, openDelay: time.Second})
	if err == nil || !strings.Contains(err.Error(), "outage") {
		t.Fatalf("want a flag error about the outage, got %v", err)
	}
}
