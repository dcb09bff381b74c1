package main

import (
	"bytes"
	"fmt"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"sort"
	"strconv"
	"sync"
	"time"
)

// The headers a request carries: its id (the same on every attempt, so the
// server can count retries) and the checksum of its image (so the server
// can tell that a retry sent the whole image again).
const (
	headerID  = "X-Request-Id"
	headerSum = "X-Image-Crc32"
)

// pngMagic starts every readable image.
var pngMagic = []byte("\x89PNG\r\n\x1a\n")

// serverConfig is how flaky the server is.
type serverConfig struct {
	fail, drop, slow float64
	slowMin, slowMax time.Duration
	seed             uint64
}

func (c config) serverConfig() serverConfig {
	return serverConfig{fail: c.fail, drop: c.drop, slow: c.slow, slowMin: c.slowMin, slowMax: c.slowMax, seed: c.seed}
}

func (c serverConfig) String() string {
	return fmt.Sprintf("%.0f%% of attempts 429/500/504, %.0f%% dropped connections, %.0f%% slow (%v-%v), the rest 5-30ms",
		100*c.fail, 100*c.drop, 100*c.slow, c.slowMin, c.slowMax)
}

// server is the flaky OCR API on loopback. Its handler records every
// arrival; everything below mu is guarded by it.
type server struct {
	url  string
	cfg  serverConfig
	http *http.Server
	done chan struct{} // closed when Serve has returned

	mu       sync.Mutex
	idle     sync.Cond      // signalled when active drops to 0; uses mu
	rnd      *rand.Rand     // the fault draws, one set per arrival
	arrivals []time.Time    // every attempt's arrival, in order
	attempts map[string]int // attempts per request id
	refused  map[string]int // attempts per id answered 400 for an unreadable image
	retries  int            // arrivals of an id seen before
	corrupt  int            // attempts whose image did not match its checksum
	active   int            // handlers running
	peak     int            // most handlers running at once
}

// startServer serves POST /v1/ocr on a free loopback port.
func startServer(cfg serverConfig) (*server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &server{
		url:      "http://" + ln.Addr().String() + "/v1/ocr",
		cfg:      cfg,
		done:     make(chan struct{}),
		rnd:      rand.New(rand.NewPCG(cfg.seed, 0x0c7)),
		attempts: make(map[string]int),
		refused:  make(map[string]int),
	}
	s.idle.L = &s.mu
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/ocr", s.ocr)
	s.http = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		defer close(s.done)
		_ = s.http.Serve(ln)
	}()
	return s, nil
}

// stop closes the server and its connections, and waits for its handlers.
func (s *server) stop() {
	_ = s.http.Close()
	<-s.done
	s.mu.Lock()
	for s.active > 0 {
		s.idle.Wait()
	}
	s.mu.Unlock()
}

// draw is what the server does with one attempt.
type draw struct {
	fault float64       // < drop: drop; < drop+fail: a 429, 500 or 504
	code  int           // which of them
	delay time.Duration // processing time
}

// arrive records an attempt and draws its fate.
func (s *server) arrive(id string) draw {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.arrivals = append(s.arrivals, time.Now()) // under mu: in order
	if s.attempts[id] > 0 {
		s.retries++
	}
	s.attempts[id]++
	s.active++
	s.peak = max(s.peak, s.active)
	d := draw{fault: s.rnd.Float64(), code: []int{429, 500, 504}[s.rnd.IntN(3)]}
	if s.rnd.Float64() < s.cfg.slow {
		d.delay = s.cfg.slowMin + time.Duration(s.rnd.Int64N(int64(s.cfg.slowMax-s.cfg.slowMin)+1))
	} else {
		d.delay = 5*time.Millisecond + time.Duration(s.rnd.Int64N(int64(25*time.Millisecond)))
	}
	return d
}

func (s *server) leave() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.active--; s.active == 0 {
		s.idle.Broadcast()
	}
}

// ocr is the API: it reads the image, and answers with its text, or fails.
func (s *server) ocr(w http.ResponseWriter, r *http.Request) {
	id := r.Header.Get(headerID)
	d := s.arrive(id)
	defer s.leave()
	img, err := io.ReadAll(r.Body)
	if err != nil {
		return // the client went away
	}
	if !bytes.HasPrefix(img, pngMagic) {
		s.mu.Lock()
		s.refused[id]++
		s.mu.Unlock()
		http.Error(w, "unreadable image", http.StatusBadRequest)
		return
	}
	if strconv.FormatUint(uint64(crc32.ChecksumIEEE(img)), 16) != r.Header.Get(headerSum) {
		s.mu.Lock()
		s.corrupt++
		s.mu.Unlock()
		http.Error(w, "image does not match its checksum", http.StatusUnprocessableEntity)
		return
	}
	switch {
	case d.fault < s.cfg.drop:
		if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
			_ = conn.Close() // the client sees its connection close: a transport error
		}
		return
	case d.fault < s.cfg.drop+s.cfg.fail && d.code == http.StatusTooManyRequests:
		w.Header().Set("Retry-After", "1")
		http.Error(w, "slow down", d.code) // at once: a gateway's answer
		return
	}
	select {
	case <-time.After(d.delay):
	case <-r.Context().Done():
		return // the client gave up (a timeout)
	}
	if d.fault < s.cfg.drop+s.cfg.fail {
		http.Error(w, http.StatusText(d.code), d.code)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"id":%q,"text":"INVOICE %s, %d bytes read"}`, id, id, len(img))
}

// now is what the progress line shows of the server: the retries it saw,
// and its arrivals in the last period.
func (s *server) now(per time.Duration) (retries, recent int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	from := time.Now().Add(-per)
	i := sort.Search(len(s.arrivals), func(i int) bool { return !s.arrivals[i].Before(from) })
	return s.retries, len(s.arrivals) - i
}

// serverResults is what the server saw, for the summary.
type serverResults struct {
	arrivals   int
	retries    int
	maxWindow  int           // most arrivals in any window [t, t+per)
	windowAt   time.Duration // where that window starts, from the first arrival
	span       time.Duration // from the first arrival to the last
	peak       int           // most requests handled at once
	corrupt    int
	mostTries  int // most attempts of one request id
	refusedBad int // ids answered 400 more than once: a 4xx that was retried
}

func (s *server) results(per time.Duration) serverResults {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := serverResults{arrivals: len(s.arrivals), retries: s.retries, peak: s.peak, corrupt: s.corrupt}
	r.maxWindow, r.windowAt = maxInWindow(s.arrivals, per)
	if n := len(s.arrivals); n > 0 {
		r.span = s.arrivals[n-1].Sub(s.arrivals[0])
	}
	for _, n := range s.attempts {
		r.mostTries = max(r.mostTries, n)
	}
	for id, n := range s.refused {
		if n > 1 || s.attempts[id] > 1 {
			r.refusedBad++
		}
	}
	return r
}

// maxInWindow returns the most times of ts (in order) inside any half-open
// window [t, t+per), and where the first such window starts, as an offset
// from ts[0]. A window holding the most can always start at one of the
// times, so those are the only starts tried.
func maxInWindow(ts []time.Time, per time.Duration) (most int, at time.Duration) {
	j := 0
	for i := range ts {
		for j < len(ts) && ts[j].Sub(ts[i]) < per {
			j++
		}
		if j-i > most {
			most, at = j-i, ts[i].Sub(ts[0])
		}
	}
	return most, at
}
