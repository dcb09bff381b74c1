package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/troupe-go/troupe/troupehttp"
)

// checkLoopback refuses a dashboard address that is not on loopback: the
// page shows the stack to whoever reaches it.
func checkLoopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err == nil && host != "localhost" {
		if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
			err = errors.New("not a loopback host")
		}
	}
	if err != nil {
		return fmt.Errorf("bad flags: -dashboard %q: the dashboard serves on loopback only (127.0.0.1:PORT, [::1]:PORT or localhost:PORT): %w", addr, err)
	}
	return nil
}

// serveDashboard serves d on addr and says where; stop ends the page's
// streams, then the server.
func serveDashboard(w io.Writer, addr string, d *troupehttp.Dashboard) (stop func(context.Context) error, err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("dashboard: %w", err)
	}
	srv := &http.Server{Handler: d, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	fmt.Fprintf(w, "dashboard: http://%s/\n", ln.Addr())
	return func(ctx context.Context) error {
		err := errors.Join(d.Close(ctx), srv.Shutdown(ctx))
		if e := <-served; !errors.Is(e, http.ErrServerClosed) {
			err = errors.Join(err, e)
		}
		return err
	}, nil
}
