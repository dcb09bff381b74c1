package main

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"time"
)

// startFlakyServer serves /item/{id} on a free loopback port, failing a
// share fail of requests with 500 and answering a share slow of them after
// delay (or when the client gives up).
func startFlakyServer(fail, slow float64, delay time.Duration) (url string, stop func(), err error) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /item/{id}", func(w http.ResponseWriter, r *http.Request) {
		switch p := rand.Float64(); {
		case p < fail:
			http.Error(w, "flaky", http.StatusInternalServerError)
			return
		case p < fail+slow:
			select {
			case <-time.After(delay):
			case <-r.Context().Done():
				return
			}
		}
		fmt.Fprintf(w, "item %s", r.PathValue("id"))
	})
	return serve(mux)
}

// serve serves h on a free loopback port until stop is called.
func serve(h http.Handler) (url string, stop func(), err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(ln)
	}()
	return "http://" + ln.Addr().String(), func() {
		_ = srv.Close()
		<-done
	}, nil
}

// client fetches items from the flaky server. Safe for concurrent use.
type client struct {
	url  string
	http *http.Client
}

func newClient(url string) *client {
	return &client{url: url, http: &http.Client{Transport: &http.Transport{}}}
}

// fetch gets item id; a status other than 200 is an error.
func (c *client) fetch(ctx context.Context, id int) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("%s/item/%d", c.url, id), nil)
	if err != nil {
		return "", err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("server said %s", resp.Status)
	}
	return string(body), err
}

func (c *client) close() { c.http.CloseIdleConnections() }
