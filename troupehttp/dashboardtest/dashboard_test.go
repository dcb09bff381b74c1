// Package dashboardtest opens troupehttp's Dashboard in a real headless
// Chromium. It is a module of its own so that the browser driver is no
// dependency of troupe's.
package dashboardtest

import (
	"context"
	"errors"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/stages"
	"github.com/troupe-go/troupe/stages/breaker"
	"github.com/troupe-go/troupe/troupehttp"
	"github.com/troupe-go/troupe/troupetest"
)

func TestMain(m *testing.M) { troupetest.Main(m) }

const (
	chromium   = "/usr/bin/chromium"
	scriptName = "<script>alert(1)</script>"
)

// needChromium skips the test where Chromium is not installed, and fails
// it under CI (CI=true), which promises to install it.
func needChromium(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(chromium); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s: %v; CI=true runs this test: install it (apt-get install -y chromium)", chromium, err)
		}
		t.Skipf("%s not found (apt-get install -y chromium to run this test)", chromium)
	}
}

// cellJS defines cell(stack, stage, field): the text of a stage's field as
// the page shows it, null where the page shows none.
const cellJS = `window.cell = (stack, stage, field) => {
  for (const s of document.querySelectorAll("section.stack"))
    if (s.dataset.stack === stack)
      for (const c of s.querySelectorAll(".stage"))
        if (c.dataset.stage === stage) {
          const d = c.querySelector('dd[data-field="' + field + '"]');
          return d && !d.hidden ? d.textContent : null;
        }
  return null;
}; true`

// The page renders in a real browser: the stacks' stages by name (a name
// full of markup as text, no script run), a number that moves with the
// traffic, and a breaker's opening. With TROUPE_SCREENSHOT=1 it saves the
// README's picture, docs/dashboard.png.
// spec: PP5
func TestTheDashboardRendersLiveInChromium(t *testing.T) {
	needChromium(t)
	d, err := troupehttp.NewDashboard(troupehttp.DashboardInterval(250 * time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	sys := troupetest.NewSystem(t)
	var failing atomic.Bool
	inner := actors.Func(func(ctx context.Context, r int) (int, error) {
		pause(ctx, time.Duration(2+rand.IntN(18))*time.Millisecond) // a service of varied latency
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		if failing.Load() {
			return 0, errors.New("downstream failed")
		}
		return r, nil
	})
	api, err := stages.Stack[int, int]().Observe(d.Observer(), "ocr-api").
		Limit(16).
		Breaker(breaker.ConsecutiveFailures(5), breaker.OpenDelay(time.Hour)).
		Build(sys, inner)
	if err != nil {
		t.Fatal(err)
	}
	defer api.Close(context.Background())
	odd, err := stages.Stack[int, int]().Limit(2).Named(`<img src=x onerror="alert(2)">`).Build(sys, inner)
	if err != nil {
		t.Fatal(err)
	}
	defer odd.Close(context.Background())
	if err := errors.Join(d.Register("ocr-api", api), d.Register(scriptName, odd)); err != nil {
		t.Fatal(err)
	}
	url := serve(t, d)

	// Traffic from four callers until the test ends.
	traffic, stopTraffic := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer wg.Wait()
	defer stopTraffic()
	for range 4 {
		wg.Go(func() {
			for traffic.Err() == nil {
				if _, err := troupe.Do(traffic, api, 0); err != nil {
					pause(traffic, 5*time.Millisecond) // an open breaker answers at once
				}
			}
		})
	}

	var dialogs atomic.Int32
	ctx := browser(t, chromedp.WithListener(func(ev any) {
		if _, ok := ev.(*page.EventJavascriptDialogOpening); ok {
			dialogs.Add(1)
		}
	}))
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(chromedp.Do(ctx, chromedp.Navigate(url), chromedp.WaitVisible(`section.stack .stage`)))
	_, err = chromedp.Run(ctx, chromedp.Evaluate[bool](cellJS))
	must(err)

	names, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](
		`[...document.querySelectorAll("section.stack h2, .stage h3")].map(e => e.textContent)`))
	must(err)
	want := []string{"ocr-api", scriptName, "limit", "breaker", `<img src=x onerror="alert(2)">`}
	for _, w := range want {
		if !slices.Contains(names, w) {
			t.Errorf("the page shows %q, not %q", names, w)
		}
	}

	// A rate that moves: read it once it has a value, then wait for another.
	first, err := chromedp.Run(ctx, pollCell("ocr-api", "limit", "accepted", "–"))
	must(err)
	second, err := chromedp.Run(ctx, pollCell("ocr-api", "limit", "accepted", first))
	must(err)
	t.Logf("limit accepted/s: %s, then %s", first, second)
	if _, err := chromedp.Run(ctx, pollCell("ocr-api", "limit", "p99", "–")); err != nil {
		t.Errorf("no p99 shown: %v", err)
	}
	if got, err := chromedp.Run(ctx, pollCell("ocr-api", "breaker", "breaker", "")); err != nil || got != "closed" {
		t.Errorf("breaker before the trip: %q, %v", got, err)
	}

	shot := os.Getenv("TROUPE_SCREENSHOT") == "1"
	if shot { // a picture worth looking at: its plots show the traffic, then the trip
		must(waitTicks(ctx, 30))
	}

	// Failing calls trip the breaker: the page shows it open.
	failing.Store(true)
	_, err = chromedp.Run(ctx, chromedp.PollFunction[bool](`() => cell("ocr-api", "breaker", "breaker") === "open"`,
		chromedp.WithPollingTimeout(20*time.Second)))
	must(err)
	rejected, err := chromedp.Run(ctx, pollCell("ocr-api", "breaker", "rejected", "0.00"))
	must(err)
	t.Logf("breaker open, rejecting %s/s", rejected)
	if n := dialogs.Load(); n != 0 {
		t.Errorf("%d script dialogs opened: a name ran as markup", n)
	}

	if shot {
		must(waitTicks(ctx, 8))
		png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		must(err)
		must(os.WriteFile(filepath.Join("..", "..", "docs", "dashboard.png"), png, 0o644))
	}
}

// waitTicks waits for the page to receive n more events.
func waitTicks(ctx context.Context, n int) error {
	frames, err := chromedp.Run(ctx, chromedp.Evaluate[int](`Number(document.body.dataset.frames)`))
	if err != nil {
		return err
	}
	_, err = chromedp.Run(ctx, chromedp.PollFunction[bool](`n => Number(document.body.dataset.frames) >= n`,
		chromedp.WithPollingArgs(frames+n), chromedp.WithPollingTimeout(30*time.Second)))
	return err
}

// pollCell waits for the field of a stage to show a value other than not,
// and returns it.
func pollCell(stack, stage, field, not string) chromedp.Action[string] {
	return chromedp.PollFunction[string](`(stack, stage, field, not) => {
  const v = cell(stack, stage, field);
  return v !== null && v !== not ? v : false;
}`, chromedp.WithPollingArgs(stack, stage, field, not), chromedp.WithPollingTimeout(20*time.Second))
}

// serve serves h on a loopback port until the test ends and returns its
// address; the dashboard's streams are closed first.
func serve(t *testing.T, d *troupehttp.Dashboard) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: d, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := errors.Join(d.Close(ctx), srv.Shutdown(ctx)); err != nil {
			t.Error(err)
		}
		if err := <-served; !errors.Is(err, http.ErrServerClosed) {
			t.Error(err)
		}
	})
	return "http://" + ln.Addr().String() + "/"
}

// browser starts a headless Chromium with a fresh profile for the test,
// closed when it ends, and returns a context for its first tab.
func browser(t *testing.T, opts ...chromedp.ContextOption) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	alloc, cancelAlloc := chromedp.NewExecAllocator(ctx,
		chromedp.ExecPath(chromium),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1100, 900),
	)
	tab, cancelTab := chromedp.NewContext(alloc, opts...)
	t.Cleanup(func() {
		if err := chromedp.Cancel(tab); err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("closing Chromium: %v", err)
		}
		cancelTab()
		cancelAlloc()
		cancel()
	})
	return tab
}

// pause waits for d or for ctx.
func pause(ctx context.Context, d time.Duration) {
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
	case <-ctx.Done():
	}
}
