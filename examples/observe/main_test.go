package main

import (
	"bytes"
	"context"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/troupe-go/troupe/troupetest"
)

func TestMain(m *testing.M) { troupetest.Main(m) }

// The example prints the documented metrics, scraped from its own
// /metrics in Prometheus text, and their counts add up.
func TestOB2_ExamplePrintsTheDocumentedMetrics(t *testing.T) {
	var out bytes.Buffer
	cfg := config{requests: 40, callers: 4, fail: 0.3, slow: 0.1, timeout: 50 * time.Millisecond}
	if err := run(context.Background(), &out, cfg); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	for _, name := range []string{
		"troupe_calls_total", "troupe_call_duration_seconds_count", "troupe_call_duration_seconds_sum",
		"troupe_active_calls", "troupe_attempts_total",
	} {
		if !regexp.MustCompile(`(?m)^` + name + `\{.*troupe_pipeline_name="items"`).MatchString(s) {
			t.Errorf("no %s line in:\n%s", name, s)
		}
	}
	// Every request finishes once at the limit stage, whatever its outcome.
	var total int
	for _, m := range regexp.MustCompile(`(?m)^troupe_calls_total\{.*troupe_stage_name="limit"\} (\d+)$`).FindAllStringSubmatch(s, -1) {
		n, _ := strconv.Atoi(m[1])
		total += n
	}
	if total != cfg.requests {
		t.Errorf("limit stage finished %d calls, want %d:\n%s", total, cfg.requests, s)
	}
	if bytes.Contains(out.Bytes(), []byte("_bucket{")) {
		t.Errorf("buckets printed without -all:\n%s", s)
	}
	if err := run(context.Background(), &bytes.Buffer{}, config{requests: 0, callers: 1}); err == nil {
		t.Fatal("bad flags accepted")
	}
}
