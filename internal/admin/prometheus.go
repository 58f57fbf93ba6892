package admin

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/zoohq/zoo/internal/metrics"
)

// PrometheusClassName is the metricsProvider.className that asks for the
// Prometheus endpoint, as in Apache.
const PrometheusClassName = "org.apache.zookeeper.metrics.prometheus.PrometheusMetricsProvider"

// Apache's PrometheusMetricsProvider exports a summary with the median
// only (DetailLevel.BASIC), or with the 0.5, 0.9 and 0.99 quantiles
// (ADVANCED: the latencies).
var (
	basicQuantiles    = []float64{0.5}
	advancedQuantiles = []float64{0.5, 0.9, 0.99}
)

// RegisterMetrics registers the server's metrics on reg under Apache's
// names, types and labels, and, when runtime is set (exportJvmInfo), the
// Go runtime's and the process's metrics where Apache exports the JVM's.
func RegisterMetrics(reg prometheus.Registerer, set *metrics.Set, runtime bool) error {
	if err := reg.Register(setCollector{set}); err != nil {
		return err
	}
	if !runtime {
		return nil
	}
	if err := reg.Register(collectors.NewGoCollector()); err != nil {
		return err
	}
	return reg.Register(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
}

// MetricsHandler serves /metrics from g.
func MetricsHandler(g prometheus.Gatherer) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(g, promhttp.HandlerOpts{}))
	return mux
}

// setCollector exports a metrics.Set. It is an unchecked collector (no
// descriptions up front): the set's gauges, such as each peer's lag, come
// and go with the server's state.
type setCollector struct{ set *metrics.Set }

func (setCollector) Describe(chan<- *prometheus.Desc) {}

func (c setCollector) Collect(ch chan<- prometheus.Metric) {
	c.set.Each(func(m metrics.Metric) {
		var names, values []string
		for i := 1; i < len(m.Labels); i += 2 {
			names, values = append(names, m.Labels[i-1]), append(values, m.Labels[i])
		}
		desc := prometheus.NewDesc(m.Name, m.Help, names, nil)
		var pm prometheus.Metric
		var err error
		switch m.Kind {
		case metrics.KindCounter:
			pm, err = prometheus.NewConstMetric(desc, prometheus.CounterValue, m.Value, values...)
		case metrics.KindGauge:
			pm, err = prometheus.NewConstMetric(desc, prometheus.GaugeValue, m.Value, values...)
		case metrics.KindSummary:
			qs := basicQuantiles
			if m.Summary.Detailed() {
				qs = advancedQuantiles
			}
			quantiles := make(map[float64]float64, len(qs))
			for _, q := range qs {
				quantiles[q] = float64(metrics.Quantile(m.Summary.Recent, q))
			}
			pm, err = prometheus.NewConstSummary(desc, uint64(m.Summary.Count), float64(m.Summary.Sum), quantiles, values...)
		case metrics.KindHistogram:
			h := m.Histogram
			pm, err = prometheus.NewConstHistogram(desc, h.Count, h.Sum, h.Buckets, values...)
		default:
			return
		}
		if err == nil {
			ch <- pm
		} else {
			ch <- prometheus.NewInvalidMetric(desc, err)
		}
	})
}
