package stages_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/backoff"
	"github.com/troupe-go/troupe/internal/mailbox"
	"github.com/troupe-go/troupe/stages"
	"github.com/troupe-go/troupe/stages/adaptive"
	"github.com/troupe-go/troupe/stages/breaker"
	"github.com/troupe-go/troupe/stages/fallback"
	"github.com/troupe-go/troupe/stages/filter"
	"github.com/troupe-go/troupe/stages/hedge"
	"github.com/troupe-go/troupe/stages/loadshed"
	"github.com/troupe-go/troupe/stages/ratelimit"
	"github.com/troupe-go/troupe/stages/reconnect"
	"github.com/troupe-go/troupe/stages/retry"
	"github.com/troupe-go/troupe/stages/spawnready"
	"github.com/troupe-go/troupe/stages/timeout"
	"github.com/troupe-go/troupe/supervisor"
	"github.com/troupe-go/troupe/troupehttp"
	"github.com/troupe-go/troupe/troupetest"
)

// spec: EG6
func TestEveryConstructorRefusesANilOptionOrFunctionWithAnError(t *testing.T) {
	sys := troupetest.NewSystem(t)
	f := actors.Func(func(_ context.Context, s string) (string, error) { return s, nil })
	s := stages.Stack[string, string]
	build := func(b stages.Builder[string, string]) func() error {
		return func() error { _, err := b.Build(sys, f); return err }
	}
	dial := reconnect.Dialer(func(context.Context, string) (troupe.Service[string, string], error) { return f, nil })
	fb := func(_ context.Context, _ string, err error) (string, error) { return "", err }
	groupBuild := func(string) supervisor.Build[string, string] {
		return func(troupe.Host) (troupe.Service[string, string], error) { return f, nil }
	}
	rate := ratelimit.Rate{Num: 1, Per: time.Second}
	cases := map[string]func() error{
		// A nil option, through each stage's Layer (and so its New).
		"timeout":     build(s().Timeout(time.Second, nil)),
		"ratelimit":   build(s().RateLimit(rate, nil)),
		"breaker":     build(s().Breaker(nil)),
		"loadshed":    build(s().LoadShed(nil)),
		"fallback":    build(s().Fallback(fb, nil)),
		"retry":       build(s().Retry(1, nil, nil)),
		"hedge":       build(s().Hedge(hedge.Delay(time.Second), nil)),
		"adaptive":    build(s().Adaptive(nil)),
		"filter":      build(s().Filter(func(r string) (string, error) { return r, nil }, nil)),
		"asyncfilter": build(s().AsyncFilter(func(_ context.Context, r string) (string, error) { return r, nil }, nil)),
		"spawnready":  build(s().SpawnReady(nil)),
		"reconnect": func() error {
			_, err := reconnect.New[string, string, string](sys, dial, "x", nil)
			return err
		},
		"supervisor": func() error {
			_, err := supervisor.New(sys, "p", func(h troupe.Host) (troupe.Service[string, string], error) { return f, nil }, nil)
			return err
		},
		"supervisor.NewGroup": func() error { _, err := supervisor.NewGroup(sys, groupBuild, nil); return err },
		"supervisor.NewGroup pipeline": func() error {
			_, err := supervisor.NewGroup(sys, groupBuild, supervisor.WithPipeline(nil))
			return err
		},
		"backoff":      func() error { _, err := backoff.New(time.Second, time.Minute, nil); return err },
		"backoff.GRPC": func() error { _, err := backoff.GRPC(nil); return err },
		"mailbox":      func() error { _, err := mailbox.New(1, nil); return err },
		"system": func() error {
			_, err := s().Limit(1).Build(troupetest.NewSystem(t, nil), f)
			return err
		},
		"troupehttp.Client": func() error {
			_, err := stages.Stack[*http.Request, *http.Response]().Limit(1).Build(sys, troupehttp.Client(nil, nil))
			return err
		},

		// A nil function, or one given through an option.
		"actors.Func":            build(s().Limit(1)), // replaced below: a nil leaf function
		"filter predicate":       build(s().Filter(nil)),
		"asyncfilter check":      build(s().AsyncFilter(nil)),
		"fallback function":      build(s().Fallback(nil)),
		"fallback To(nil)":       build(s().Fallback(fallback.To[string, string](nil))),
		"fallback When(nil)":     build(s().Fallback(fb, fallback.When(nil))),
		"breaker Classify(nil)":  build(s().Breaker(breaker.Classify[string](nil))),
		"breaker OnStateChange":  build(s().Breaker(breaker.OnStateChange(nil))),
		"hedge Final(nil)":       build(s().Hedge(hedge.Delay(time.Second), hedge.Final[string, string](nil))),
		"hedge Clone(nil)":       build(s().Hedge(hedge.Delay(time.Second), hedge.Clone[string, string](nil))),
		"adaptive Classify(nil)": build(s().Adaptive(adaptive.Classify(nil))),
		"adaptive OnLimitChange": build(s().Adaptive(adaptive.OnLimitChange(nil))),
		"retry WithBudget(nil)":  build(s().Retry(1, nil, retry.WithBudget(nil))),
		"ratelimit Remote(nil)":  build(s().RateLimit(rate, ratelimit.Remote(nil))),
		"reconnect OnStateChange": func() error {
			_, err := reconnect.New[string, string, string](sys, dial, "x", reconnect.OnStateChange(nil))
			return err
		},
		"reconnect Dialer(nil)": func() error {
			_, err := reconnect.New[string, string, string](sys, reconnect.Dialer[string, string, string](nil), "x")
			return err
		},
		"supervisor build": func() error { _, err := supervisor.New[string, string](sys, "p", nil); return err },
		"group build":      func() error { _, err := supervisor.NewGroup[string, string, string](sys, nil); return err },
		"group system":     func() error { _, err := supervisor.NewGroup(nil, groupBuild); return err },
		"group IdleTTL(0)": func() error { _, err := supervisor.NewGroup(sys, groupBuild, supervisor.IdleTTL(0)); return err },
		"group MaxKeys(0)": func() error { _, err := supervisor.NewGroup(sys, groupBuild, supervisor.MaxKeys(0)); return err },
		"supervisor system": func() error {
			_, err := supervisor.New[string, string](nil, "p", func(troupe.Host) (troupe.Service[string, string], error) { return f, nil })
			return err
		},
		"backoff WithSource(nil)": func() error { _, err := backoff.New(time.Second, time.Minute, backoff.WithSource(nil)); return err },
		"system WithLogger(nil)": func() error {
			_, err := s().Limit(1).Build(troupetest.NewSystem(t, actors.WithLogger(nil)), f)
			return err
		},
		"system WithObserver(nil)": func() error {
			_, err := s().Limit(1).Build(troupetest.NewSystem(t, actors.WithObserver(nil, "p")), f)
			return err
		},
		"host nil strategy":  func() error { _, err := sys.NewHost("h", nil); return err },
		"host bad Intensity": func() error { _, err := sys.NewHost("h", actors.Intensity(-1, time.Minute)); return err },
		"troupehttp HoldLimit(-1)": func() error {
			_, err := stages.Stack[*http.Request, *http.Response]().Build(sys, troupehttp.Client(nil, troupehttp.HoldLimit(-1)))
			return err
		},
		"loadshed KeepFor too many": build(s().LoadShed(loadshed.Capacity(2), loadshed.KeepFor(loadshed.High, 3))),
		"timeout Capacity(-1)":      build(s().Timeout(time.Second, timeout.Capacity(-1))),
		"spawnready Capacity(-1)":   build(s().SpawnReady(spawnready.Capacity(-1))),
		"filter Capacity(-1)":       build(s().Filter(func(r string) (string, error) { return r, nil }, filter.Capacity(-1))),
	}
	cases["actors.Func"] = func() error {
		_, err := s().Limit(1).Build(sys, actors.Func[string, string](nil))
		return err
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			var err error
			assert.NotPanics(t, func() { err = c() })
			assert.ErrorIs(t, err, troupe.ErrBadConfig)
		})
	}
}
