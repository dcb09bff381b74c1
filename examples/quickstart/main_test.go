package main

import (
	"bytes"
	"context"
	"regexp"
	"strconv"
	"testing"

	"github.com/troupe-go/troupe/troupetest"
)

func TestMain(m *testing.M) { troupetest.Main(m) }

func TestQuickstartSummary(t *testing.T) {
	for _, tc := range []struct {
		fail     float64
		ok, bad  func(int) bool
		scenario string
	}{
		{0, func(n int) bool { return n == 30 }, func(n int) bool { return n == 0 }, "healthy server"},
		{1, func(n int) bool { return n == 0 }, func(n int) bool { return n == 30 }, "server always fails"},
		{0.5, func(n int) bool { return n > 0 }, func(n int) bool { return n > 0 }, "flaky server"},
	} {
		t.Run(tc.scenario, func(t *testing.T) {
			var out bytes.Buffer
			if err := run(context.Background(), &out, config{requests: 30, callers: 4, fail: tc.fail, buffer: 4}); err != nil {
				t.Fatal(err)
			}
			m := regexp.MustCompile(`summary: 30 requests, (\d+) ok, (\d+) failed`).FindStringSubmatch(out.String())
			if m == nil {
				t.Fatalf("no summary in:\n%s", out.String())
			}
			ok, _ := strconv.Atoi(m[1])
			bad, _ := strconv.Atoi(m[2])
			if ok+bad != 30 || !tc.ok(ok) || !tc.bad(bad) {
				t.Fatalf("%d ok, %d failed:\n%s", ok, bad, out.String())
			}
			if tc.fail == 1 && !bytes.Contains(out.Bytes(), []byte("500 Internal Server Error")) {
				t.Fatalf("errors do not say what the server said:\n%s", out.String())
			}
		})
	}
	if err := run(context.Background(), &bytes.Buffer{}, config{requests: 0, callers: 1}); err == nil {
		t.Fatal("bad flags accepted")
	}
}
