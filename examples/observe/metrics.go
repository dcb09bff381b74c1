package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/troupe-go/troupe/troupeotel"
)

// metrics is the observer, its meter provider, and the /metrics server
// that exports what it records in Prometheus text.
type metrics struct {
	obs  *troupeotel.Observer
	mp   *sdkmetric.MeterProvider
	url  string // the /metrics address
	stop func(context.Context)
}

// startMetrics makes an observer whose meter provider a Prometheus
// exporter reads, on a registry of its own served at /metrics on a free
// loopback port.
func startMetrics() (*metrics, error) {
	reg := prometheus.NewRegistry()
	exp, err := otelprom.New(otelprom.WithRegisterer(reg), otelprom.WithoutScopeInfo(), otelprom.WithoutTargetInfo())
	if err != nil {
		return nil, err
	}
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(exp))
	obs, err := troupeotel.New(mp)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	url, stop, err := serve(mux)
	if err != nil {
		return nil, err
	}
	return &metrics{obs: obs, mp: mp, url: url + "/metrics", stop: func(ctx context.Context) {
		stop()
		_ = mp.Shutdown(ctx)
	}}, nil
}

// print fetches /metrics once and prints its troupe_ lines, without the
// histograms' buckets unless all.
func (m *metrics) print(ctx context.Context, w io.Writer, all bool) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, m.url, nil)
	if err != nil {
		return err
	}
	c := &http.Client{Transport: &http.Transport{}}
	defer c.CloseIdleConnections()
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", m.url, resp.Status)
	}
	fmt.Fprintf(w, "GET %s (troupe_ lines):\n", m.url)
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "troupe_") || (!all && strings.Contains(line, "_bucket{")) {
			continue
		}
		fmt.Fprintln(w, line)
	}
	return sc.Err()
}
