package troupehttp_test

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"net/textproto"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Server-sent events flushed every 50 ms reach the client one by one, as
// they are written: the backend writes the next event only once the
// client has read the one before (a proxy that held them back would make
// it wait in vain).
//
// spec: HT2
func TestServerSentEventsReachTheClientAsTheyAreWritten(t *testing.T) {
	const events = 8
	ctx := testCtx(t)
	acks := make(chan int)
	var late atomic.Int64
	be := newBackend(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for i := range events {
			fmt.Fprintf(w, "data: %d\n\n", i)
			w.(http.Flusher).Flush()
			select {
			case got := <-acks:
				if got != i {
					late.Add(1)
				}
			case <-time.After(5 * time.Second):
				late.Add(1) // the event never reached the client on its own
			case <-r.Context().Done():
				return
			}
			<-tick.C
		}
	})
	g := newGateway(t, be.URL, gatewayStack())
	r, err := http.NewRequestWithContext(ctx, http.MethodGet, g.URL, nil)
	require.NoError(t, err)
	resp, err := newUser(t).Do(r)
	require.NoError(t, err)
	defer resp.Body.Close()
	lines := bufio.NewScanner(resp.Body)
	for i := range events {
		for lines.Scan() && lines.Text() == "" {
		}
		require.Equal(t, fmt.Sprintf("data: %d", i), lines.Text())
		acks <- i
	}
	for lines.Scan() {
	}
	require.NoError(t, lines.Err())
	assert.Zero(t, late.Load(), "events held back")
}

// Trailers sent after a 1 MB body arrive with it.
//
// spec: HT2
func TestTrailersArriveAfterALargeBody(t *testing.T) {
	body := pattern(1 << 20)
	sum := sha256.Sum256(body)
	be := newBackend(t, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Trailer", "X-Sum")
		for off := 0; off < len(body); off += 64 << 10 {
			_, _ = w.Write(body[off : off+64<<10])
			w.(http.Flusher).Flush()
		}
		w.Header().Set("X-Sum", hex.EncodeToString(sum[:]))
	})
	g := newGateway(t, be.URL, gatewayStack())
	resp, err := newUser(t).Get(g.URL)
	require.NoError(t, err)
	got, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	assert.Len(t, got, len(body))
	assert.Equal(t, hex.EncodeToString(sum[:]), resp.Trailer.Get("X-Sum"))
}

// A 103 Early Hints reaches the client before the 200, and a request
// that expects 100-continue gets its 100 before it sends its body: the
// informational responses cross the stack (ReverseProxy forwards them
// through an httptrace.ClientTrace in the request's context, which the
// leaf's request keeps).
//
// spec: HT1 HT2
func TestInformationalResponsesCrossTheStack(t *testing.T) {
	be := newBackend(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/hints" {
			w.Header().Set("Link", "</style.css>; rel=preload")
			w.WriteHeader(http.StatusEarlyHints)
			io.WriteString(w, "page")
			return
		}
		b, _ := io.ReadAll(r.Body)
		fmt.Fprintf(w, "got %s", b)
	})
	g := newGateway(t, be.URL, gatewayStack())
	user := newUser(t)

	var hints []string
	trace := &httptrace.ClientTrace{Got1xxResponse: func(code int, h textproto.MIMEHeader) error {
		hints = append(hints, fmt.Sprint(code, " ", h.Get("Link")))
		return nil
	}}
	r, err := http.NewRequestWithContext(httptrace.WithClientTrace(testCtx(t), trace), http.MethodGet, g.URL+"/hints", nil)
	require.NoError(t, err)
	resp, err := user.Do(r)
	require.NoError(t, err)
	assert.Equal(t, "page", readBody(t, resp))
	assert.Equal(t, []string{"103 </style.css>; rel=preload"}, hints)

	var continued atomic.Bool
	trace = &httptrace.ClientTrace{Got100Continue: func() { continued.Store(true) }}
	tr := &http.Transport{ExpectContinueTimeout: time.Minute} // waits for the 100 before the body
	t.Cleanup(tr.CloseIdleConnections)
	r, err = http.NewRequestWithContext(httptrace.WithClientTrace(testCtx(t), trace), http.MethodPost, g.URL+"/", strings.NewReader("hello"))
	require.NoError(t, err)
	r.Header.Set("Expect", "100-continue")
	resp, err = (&http.Client{Transport: tr}).Do(r)
	require.NoError(t, err)
	assert.Equal(t, "got hello", readBody(t, resp))
	assert.True(t, continued.Load(), "the client got its 100 Continue")
}

// upgrade is a backend handler that switches to protocol "echo" and
// echoes what it reads until EOF.
func upgrade(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Upgrade") != "echo" {
		http.Error(w, "want an upgrade", http.StatusBadRequest)
		return
	}
	conn, rw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return
	}
	defer conn.Close()
	fmt.Fprint(rw, "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n")
	_ = rw.Flush()
	_, _ = io.Copy(conn, rw)
}

// dialUpgrade asks url for an upgrade to "echo" and checks that the
// switched connection echoes, both ways, through whatever is between.
func dialUpgrade(t *testing.T, url string) {
	t.Helper()
	r, err := http.NewRequestWithContext(testCtx(t), http.MethodGet, url, nil)
	require.NoError(t, err)
	r.Header.Set("Connection", "Upgrade")
	r.Header.Set("Upgrade", "echo")
	resp, err := newUser(t).Do(r)
	require.NoError(t, err)
	require.Equal(t, http.StatusSwitchingProtocols, resp.StatusCode)
	conn, ok := resp.Body.(io.ReadWriteCloser)
	require.True(t, ok, "a 101's body is the connection")
	defer conn.Close()
	echoes(t, conn, bufio.NewReader(conn), 3, "")
}

// echoes writes n lines to w, reading after each its echo from r, which
// starts with prefix.
func echoes(t *testing.T, w io.Writer, r *bufio.Reader, n int, prefix string) {
	t.Helper()
	for i := range n {
		_, err := fmt.Fprintf(w, "line %d\n", i)
		require.NoError(t, err)
		got, err := r.ReadString('\n')
		require.NoError(t, err)
		assert.Equal(t, fmt.Sprintf("%sline %d\n", prefix, i), got)
	}
}

// A 101 Switching Protocols passes with its writable body: ReverseProxy
// joins the client's connection to the backend's through the stack.
//
// spec: HT2
func TestAnUpgradePassesWithItsWritableBody(t *testing.T) {
	be := newBackend(t, upgrade)
	g := newGateway(t, be.URL, gatewayStack())
	dialUpgrade(t, g.URL)
}

// A client that cancels mid-stream cancels the backend's request: the
// backend's handler sees its context end.
//
// spec: HT2
func TestAClientThatCancelsMidStreamCancelsTheBackendsRequest(t *testing.T) {
	gone := make(chan struct{})
	be := newBackend(t, func(w http.ResponseWriter, r *http.Request) {
		defer close(gone)
		for {
			if _, err := io.WriteString(w, strings.Repeat("x", 1024)); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	})
	g := newGateway(t, be.URL, gatewayStack())
	ctx, cancel := context.WithCancel(testCtx(t))
	r, err := http.NewRequestWithContext(ctx, http.MethodGet, g.URL, nil)
	require.NoError(t, err)
	resp, err := newUser(t).Do(r)
	require.NoError(t, err)
	defer resp.Body.Close()
	_, err = io.ReadFull(resp.Body, make([]byte, 4096))
	require.NoError(t, err)
	cancel()
	select {
	case <-gone:
	case <-testCtx(t).Done():
		t.Fatal("the backend's request was never cancelled")
	}
	_, err = io.Copy(io.Discard, resp.Body)
	assert.ErrorIs(t, err, context.Canceled)
}

// A backend that closes its connection mid-body makes the client's read
// fail, as over net/http's Transport, instead of ending as if the body
// were whole.
//
// spec: HT2
func TestABackendClosingMidBodyFailsTheClientsRead(t *testing.T) {
	be := newBackend(t, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Length", "1048576")
		_, _ = w.Write(pattern(64 << 10))
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler) // the server closes the connection
	})
	for _, g := range []*gateway{newPlainGateway(t, be.URL), newGateway(t, be.URL, gatewayStack())} {
		resp, err := newUser(t).Get(g.URL)
		require.NoError(t, err)
		got, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		assert.True(t, errors.Is(err, io.ErrUnexpectedEOF), "after %d bytes: %v", len(got), err)
		if g.stack != nil {
			assert.Zero(t, used(t, g.stack, "limit"))
		}
	}
}
