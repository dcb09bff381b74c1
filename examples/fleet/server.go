package main

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// headerWorker carries the number of the worker that sent a request.
const headerWorker = "X-Fleet-Worker"

// server is the OCR API on loopback, shared by the workers: it records
// every attempt's arrival and sender, takes 5-30 ms to answer, and answers
// a share of the attempts 503 (which the workers retry). Everything below
// mu is guarded by it.
type server struct {
	url  string
	http *http.Server
	done chan struct{} // closed when Serve has returned
	fail float64       // the share of attempts answered 503
	seed uint64        // with an attempt's request id and number, decides its fate

	mu       sync.Mutex
	attempts map[string]int // by request id
	arrivals []arrival
}

// arrival is one attempt at the server.
type arrival struct {
	at     time.Time
	worker int
}

func startServer(fail float64, seed uint64) (*server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &server{url: "http://" + ln.Addr().String() + "/v1/ocr", done: make(chan struct{}), fail: fail, seed: seed, attempts: map[string]int{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/ocr", s.ocr)
	s.http = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		defer close(s.done)
		_ = s.http.Serve(ln)
	}()
	return s, nil
}

func (s *server) stop() {
	_ = s.http.Close()
	<-s.done
}

func (s *server) ocr(w http.ResponseWriter, r *http.Request) {
	worker, _ := strconv.Atoi(r.Header.Get(headerWorker))
	s.mu.Lock()
	s.arrivals = append(s.arrivals, arrival{at: time.Now(), worker: worker})
	id := r.Header.Get("X-Request-Id")
	s.attempts[id]++
	rnd := s.draw(id, s.attempts[id])
	s.mu.Unlock()
	failed := rnd.Float64() < s.fail
	delay := 5*time.Millisecond + time.Duration(rnd.Int64N(int64(25*time.Millisecond)))
	select {
	case <-time.After(delay):
	case <-r.Context().Done():
		return
	}
	if failed {
		http.Error(w, "busy", http.StatusServiceUnavailable)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"id":%q,"text":"INVOICE %s"}`, r.Header.Get("X-Request-Id"), r.Header.Get("X-Request-Id"))
}

// draw is the randomness of attempt n of request id: a function of the
// seed, the request and the attempt only, so that a seed decides every
// request's fate whatever order the attempts arrive in.
func (s *server) draw(id string, n int) *rand.Rand {
	h := fnv.New64a()
	_, _ = h.Write([]byte(id))
	return rand.New(rand.NewPCG(s.seed, h.Sum64()+uint64(n)))
}

// results returns the arrivals, in order.
func (s *server) results() []arrival {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]arrival(nil), s.arrivals...)
}
