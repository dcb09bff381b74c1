package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors/stagekit"
)

// conn is one connection to the server: it calls /echo, and once a call
// fails at the transport level it reports a readiness error, so that the
// Reconnect stage discards it and connects again.
type conn struct {
	client  *http.Client
	addr    string
	broken  atomic.Pointer[error]
	permits troupe.PermitSource[string, string]
}

func newConn(client *http.Client, addr string) *conn { return &conn{client: client, addr: addr} }

// Reserve is the service's public side; the stage uses ActorsInner.
func (c *conn) Reserve(ctx context.Context) (*troupe.Permit[string, string], error) {
	if ok, err := (*connInner)(c).TryReserve(); !ok {
		return nil, err
	}
	return c.permits.Issue((*connInner)(c)), nil
}

// ActorsInner gives the stage a readiness it can ask without waiting.
func (c *conn) ActorsInner() stagekit.Inner[string, string] { return (*connInner)(c) }

type connInner conn

func (c *connInner) TryReserve() (bool, error) {
	if err := c.broken.Load(); err != nil {
		return false, *err
	}
	return true, nil
}
func (c *connInner) ReserveAsync(*stagekit.Waiter) (bool, error) { return c.TryReserve() }
func (c *connInner) CancelWait(*stagekit.Waiter) bool            { return false }
func (c *connInner) Unreserve()                                  {}
func (c *connInner) Release()                                    {}
func (c *connInner) Send(e *stagekit.Envelope[string, string])   { e.HandToCaller(c) }

// Call runs on the caller's goroutine.
func (c *connInner) Call(ctx context.Context, msg string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+c.addr+"/echo", strings.NewReader(msg))
	if err != nil {
		return "", err
	}
	resp, err := c.client.Do(req)
	if err != nil {
		if ctx.Err() == nil { // the connection failed, not the caller
			err = fmt.Errorf("connection lost: %w", err)
			c.broken.Store(&err)
		}
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return string(body), err
}
