package troupetest

import (
	"bytes"
	"log/slog"
	"sync"
)

// Log collects what a logger writes, as text, for tests that check what
// troupe logged (a dropped permit, a panic no caller waited for): pass
// Logger to actors.WithLogger. It is safe for concurrent use (the runtime's
// cleanup goroutine may write to it).
type Log struct {
	mu  sync.Mutex
	buf bytes.Buffer // guarded by mu
}

// Write appends p.
func (l *Log) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

// String returns everything written so far.
func (l *Log) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// Logger returns a text logger that writes to l.
func (l *Log) Logger() *slog.Logger { return slog.New(slog.NewTextHandler(l, nil)) }
