package troupehttp_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/stages"
	"github.com/troupe-go/troupe/stages/loadshed"
	"github.com/troupe-go/troupe/troupehttp"
)

// An HTTP server's handler behind an admission stack: one request at a
// time runs, one more may wait for it, and the rest are shed with 503 and
// a Retry-After before the handler sees them.
func ExampleHandler() {
	sys := actors.NewSystem()
	defer func() { _ = sys.Shutdown(context.Background()) }()
	release, entered := make(chan struct{}), make(chan struct{}, 1)
	mux := http.NewServeMux()
	mux.HandleFunc("/report", func(w http.ResponseWriter, r *http.Request) {
		entered <- struct{}{}
		<-release
		_, _ = io.WriteString(w, "the report")
	})
	stack, err := stages.Stack[*troupehttp.ServerCall, int]().
		LoadShed(loadshed.Capacity(1)).
		Limit(1).
		Build(sys, troupehttp.Serve(mux))
	if err != nil {
		fmt.Println(err)
		return
	}
	srv := httptest.NewServer(troupehttp.Handler(stack))
	defer srv.Close()

	first := make(chan string)
	go func() {
		resp, err := http.Get(srv.URL + "/report")
		if err != nil {
			first <- err.Error()
			return
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		first <- resp.Status + ": " + string(body)
	}()
	<-entered
	// A second request waits in the LoadShed for the Limit's slot.
	go func() {
		if resp, err := http.Get(srv.URL + "/report"); err == nil {
			resp.Body.Close()
		}
	}()
	for {
		if st, _ := stack.Stats("loadshed"); st.Used == 1 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	resp, err := http.Get(srv.URL + "/report")
	if err != nil {
		fmt.Println(err)
		return
	}
	resp.Body.Close()
	fmt.Println("the third:", resp.Status, "Retry-After", resp.Header.Get("Retry-After"))
	close(release)
	fmt.Println("the first:", <-first)
	<-entered // the second ran too
	// Output:
	// the third: 503 Service Unavailable Retry-After 1
	// the first: 200 OK: the report
}
