package troupeotel_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/troupeotel"
)

var errNoGauge = errors.New("no gauges here")

// gaugeless is a meter provider whose meters cannot make an Int64Gauge.
type gaugeless struct{ noop.MeterProvider }

func (gaugeless) Meter(string, ...metric.MeterOption) metric.Meter { return gaugelessMeter{} }

type gaugelessMeter struct{ noop.Meter }

func (gaugelessMeter) Int64Gauge(string, ...metric.Int64GaugeOption) (metric.Int64Gauge, error) {
	return nil, errNoGauge
}

// spec: OB2
func TestOB2_NewFailsWhenAnInstrumentCannotBeMade(t *testing.T) {
	obs, err := troupeotel.New(gaugeless{})
	assert.ErrorIs(t, err, errNoGauge)
	assert.Nil(t, obs)
}

// spec: OB2
func TestOB2_NilMeterProviderIsTheGlobalOne(t *testing.T) {
	obs, err := troupeotel.New(nil)
	require.NoError(t, err)
	obs.Observe(troupe.Event{Type: troupe.EventAccepted, Pipeline: "p", Stage: "limit", StageKind: "limit"})
}

// spec: OB2
func TestOB2_DurationBoundariesAreAdvised(t *testing.T) {
	for _, tc := range []struct {
		opts []troupeotel.Option
		want []float64
	}{
		{nil, []float64{0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10}},
		{[]troupeotel.Option{troupeotel.WithDurationBoundaries(0.1, 1)}, []float64{0.1, 1}},
	} {
		obs, reader := newObserver(t, tc.opts...)
		obs.Observe(troupe.Event{Type: troupe.EventFinished, Pipeline: "p", Stage: "limit", StageKind: "limit"})
		h := collect(t, reader)[troupeotel.MetricCallDuration].Data.(metricdata.Histogram[float64])
		require.Len(t, h.DataPoints, 1)
		assert.Equal(t, tc.want, h.DataPoints[0].Bounds)
	}
}

// spec: EG6
func TestANilOptionOrTracerProviderIsAnError(t *testing.T) {
	for name, opts := range map[string][]troupeotel.Option{
		"nil option":          {troupeotel.WithDurationBoundaries(1, 2), nil},
		"nil tracer provider": {troupeotel.WithTracerProvider(nil)},
	} {
		var obs *troupeotel.Observer
		var err error
		assert.NotPanics(t, func() { obs, err = troupeotel.New(noop.NewMeterProvider(), opts...) }, name)
		assert.ErrorIs(t, err, troupe.ErrBadConfig, name)
		assert.Nil(t, obs, name)
	}
}
