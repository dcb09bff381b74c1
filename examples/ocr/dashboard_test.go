package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// lines is a writer that hands each line written to it to the test.
type lines struct {
	mu  sync.Mutex
	buf bytes.Buffer
	ch  chan string
}

func (l *lines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf.Write(p)
	for {
		line, err := l.buf.ReadString('\n')
		if err != nil { // a part line: kept for the next write
			l.buf.WriteString(line)
			return len(p), nil
		}
		l.ch <- strings.TrimSuffix(line, "\n")
	}
}

// waitFor returns the first line from l with the prefix.
func (l *lines) waitFor(t *testing.T, prefix string) string {
	t.Helper()
	for line := range l.ch {
		if strings.HasPrefix(line, prefix) {
			return line
		}
	}
	t.Fatalf("no line %q", prefix)
	return ""
}

// With -dashboard the run serves the dashboard on loopback, with the
// stack's stages on it, and keeps serving after the summary until
// interrupted; then nothing serves there.
func TestOCR_Dashboard(t *testing.T) {
	cfg := short()
	cfg.requests = 10
	cfg.dashboard = "127.0.0.1:0"
	ctx, interrupt := context.WithCancel(context.Background())
	defer interrupt()
	out := &lines{ch: make(chan string, 4096)}
	done := make(chan error, 1)
	go func() { done <- run(ctx, out, cfg) }()

	url := strings.TrimPrefix(out.waitFor(t, "dashboard: http://"), "dashboard: ")
	require.True(t, strings.HasPrefix(url, "http://127.0.0.1:"), url)
	resp, err := http.Get(url)
	require.NoError(t, err)
	page, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, string(page), "<h2 class=\"pending\">"+pipeline+"</h2>")

	resp, err = http.Get(url + "events")
	require.NoError(t, err)
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	require.True(t, sc.Scan(), sc.Err())
	for _, stage := range []string{pipeline, "limit", "timeout", "retry", "ratelimit"} {
		assert.Contains(t, sc.Text(), `"name":"`+stage+`"`)
	}
	require.NoError(t, resp.Body.Close())

	out.waitFor(t, "dashboard: still serving")
	interrupt()
	require.NoError(t, <-done)
	_, err = http.Get(url)
	assert.Error(t, err, "the dashboard is closed with the run")
}
