package troupeotel_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/troupe-go/troupe/troupeotel"
)

var errFlaky = errors.New("flaky")

// newObserver returns an observer recording into a meter provider read by
// hand.
func newObserver(t *testing.T, opts ...troupeotel.Option) (*troupeotel.Observer, *sdkmetric.ManualReader) {
	t.Helper()
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	obs, err := troupeotel.New(mp, opts...)
	require.NoError(t, err)
	return obs, reader
}

// collected is one collection's metrics by name.
type collected map[string]metricdata.Metrics

func collect(t *testing.T, r *sdkmetric.ManualReader) collected {
	t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(t, r.Collect(context.Background(), &rm))
	c := collected{}
	for _, sm := range rm.ScopeMetrics {
		require.Equal(t, troupeotel.ScopeName, sm.Scope.Name)
		for _, m := range sm.Metrics {
			c[m.Name] = m
		}
	}
	return c
}

// label names a data point by its attributes: the stage's name, then the
// values of the others but pipeline and kind, in key order ("retry 1"). It
// checks the pipeline and that the kind is the name's prefix.
func label(t *testing.T, pipeline string, set attribute.Set) string {
	t.Helper()
	p, _ := set.Value(troupeotel.AttrPipeline)
	require.Equal(t, pipeline, p.AsString())
	stage, _ := set.Value(troupeotel.AttrStage)
	kind, _ := set.Value(troupeotel.AttrStageKind)
	require.Equal(t, strings.SplitN(stage.AsString(), "-", 2)[0], kind.AsString())
	parts := []string{stage.AsString()}
	for _, kv := range set.ToSlice() {
		switch kv.Key {
		case troupeotel.AttrPipeline, troupeotel.AttrStage, troupeotel.AttrStageKind:
		default:
			parts = append(parts, kv.Value.Emit())
		}
	}
	return strings.Join(parts, " ")
}

// ints returns a sum's or an int gauge's points by label; a metric never
// recorded has none.
func (c collected) ints(t *testing.T, pipeline, name string) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	m, ok := c[name]
	if !ok {
		return out
	}
	var pts []metricdata.DataPoint[int64]
	switch d := m.Data.(type) {
	case metricdata.Sum[int64]:
		pts = d.DataPoints
	case metricdata.Gauge[int64]:
		pts = d.DataPoints
	default:
		t.Fatalf("%s: unexpected data %T", name, m.Data)
	}
	for _, p := range pts {
		out[label(t, pipeline, p.Attributes)] = p.Value
	}
	return out
}

// hist returns troupe.call.duration's points by label, as "count sum".
func (c collected) hist(t *testing.T, pipeline string) map[string]string {
	t.Helper()
	out := map[string]string{}
	m, ok := c[troupeotel.MetricCallDuration]
	if !ok {
		return out
	}
	for _, p := range m.Data.(metricdata.Histogram[float64]).DataPoints {
		out[label(t, pipeline, p.Attributes)] = fmt.Sprintf("%d %g", p.Count, p.Sum)
	}
	return out
}
