package troupehttp_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/backoff"
	"github.com/troupe-go/troupe/stages"
	"github.com/troupe-go/troupe/stages/balance"
	"github.com/troupe-go/troupe/supervisor"
	"github.com/troupe-go/troupe/troupehttp"
)

// A balancer whose endpoints are base URLs: three replicas of one API,
// each endpoint a supervised pipeline of its own (here a limit) over a
// Send leaf that sends to the replica's base URL. One replica is down. The
// http.Client writes its requests against the API's logical URL; the
// Retry outside the balancer sends the retry of an attempt that failed at
// the replica down to another replica, so no call fails.
func Example_balancer() {
	ctx := context.Background()
	var bases []string
	for range 2 {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprint(w, "item ", strings.TrimPrefix(r.URL.Path, "/items/"))
		}))
		defer srv.Close()
		bases = append(bases, srv.URL)
	}
	down := httptest.NewServer(http.NotFoundHandler())
	down.Close() // nothing listens there any more
	bases = append(bases, down.URL)

	sys := actors.NewSystem()
	defer sys.Shutdown(ctx)
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()

	resolve := func(context.Context) ([]string, error) { return bases, nil }
	replica := func(base string) supervisor.Build[*http.Request, *http.Response] {
		return func(h troupe.Host) (troupe.Service[*http.Request, *http.Response], error) {
			return stages.Stack[*http.Request, *http.Response]().
				Limit(16).
				Build(h, troupehttp.Send(tr, troupehttp.BaseURL(base)))
		}
	}
	bal, err := balance.New(balance.Poll(30*time.Second, resolve, balance.Pipelines(sys, replica)))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer bal.Close(ctx)
	bo, _ := backoff.New(time.Millisecond, 10*time.Millisecond)
	stack, err := stages.Stack[*http.Request, *http.Response]().
		Timeout(5*time.Second).
		Layer(troupehttp.Retry(2, bo)).
		Build(sys, bal)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer stack.Close(ctx)

	hc := &http.Client{Transport: troupehttp.Transport(stack)}
	failed := 0
	for id := range 50 {
		resp, err := hc.Get(fmt.Sprintf("http://inventory/items/%d", id))
		if err != nil {
			failed++
			continue
		}
		if resp.StatusCode != http.StatusOK {
			failed++
		}
		resp.Body.Close()
	}
	resp, err := hc.Get("http://inventory/items/7")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	fmt.Println(resp.Status, string(body))
	fmt.Println("50 calls,", failed, "failed")
	// Output:
	// 200 OK item 7
	// 50 calls, 0 failed
}
