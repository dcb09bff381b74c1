package main

import (
	"fmt"
	"net"
	"net/http"
	"sync/atomic"
	"time"
)

// server is the downstream: an HTTP server on a loopback port that answers
// 200, or 503 to everything while it is down. It counts the requests it
// sees in each phase.
type server struct {
	url  string
	stop func()

	down    atomic.Bool
	phase   atomic.Int32    // 0 before the outage, 1 during, 2 after
	seen    [3]atomic.Int64 // requests the server saw, by phase
	srvDown atomic.Int64    // requests answered 503
}

func startServer() (*server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &server{url: "http://" + ln.Addr().String()}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /quote/{id}", func(w http.ResponseWriter, r *http.Request) {
		s.seen[s.phase.Load()].Add(1)
		if s.down.Load() {
			s.srvDown.Add(1)
			http.Error(w, "down for maintenance", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintf(w, "quote %s", r.PathValue("id"))
	})
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = hs.Serve(ln)
	}()
	s.stop = func() {
		_ = hs.Close()
		<-done
	}
	return s, nil
}

// setPhase moves the server to phase p: down during the outage.
func (s *server) setPhase(p int32) {
	s.down.Store(p == 1)
	s.phase.Store(p)
}
