package admin

import (
	"bufio"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// apacheMetric is one line of testdata/apache_metrics.txt.
type apacheMetric struct {
	typ      string // counter, gauge, summary
	advanced bool
	key      bool
}

func apacheMetrics(t *testing.T) map[string]apacheMetric {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "apache_metrics.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]apacheMetric{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 2 || strings.HasPrefix(fields[0], "#") {
			continue
		}
		out[fields[0]] = apacheMetric{typ: fields[1], advanced: slices.Contains(fields, "advanced"), key: slices.Contains(fields, "key")}
	}
	return out
}

// scrape reads /metrics in the text format, as Prometheus does.
func scrape(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", url, resp.Status)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return fams
}

// /metrics carries Apache's metric names with Apache's types, labels and
// summary quantiles, so that existing dashboards and alert rules work; Zoo's
// own are zoo_*, and the Go runtime's go_* and process_* stand where Apache
// exports the JVM's.
func TestPrometheusNamesMatchApache(t *testing.T) {
	_, clientAddr, srv := startZoo(t)
	c := dialSession(t, clientAddr)
	c.create(t, "/p", "x")
	c.get(t, "/p")
	reg := prometheus.NewRegistry()
	if err := RegisterMetrics(reg, srv.Metrics(), true); err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(MetricsHandler(reg))
	defer hs.Close()
	fams := scrape(t, hs.URL+"/metrics")
	apache := apacheMetrics(t)
	for name, fam := range fams {
		if strings.HasPrefix(name, "zoo_") || strings.HasPrefix(name, "go_") || strings.HasPrefix(name, "process_") {
			continue
		}
		want, ok := apache[name]
		if !ok {
			t.Errorf("%s is not one of Apache's metric names", name)
			continue
		}
		if got := strings.ToLower(fam.GetType().String()); got != want.typ {
			t.Errorf("%s is a %s, Apache's is a %s", name, got, want.typ)
		}
		for _, m := range fam.GetMetric() {
			hasKey := slices.ContainsFunc(m.GetLabel(), func(l *dto.LabelPair) bool { return l.GetName() == "key" })
			if hasKey != want.key {
				t.Errorf("%s labels %v; Apache's has a key label: %v", name, m.GetLabel(), want.key)
			}
			if s := m.GetSummary(); s != nil {
				var qs []float64
				for _, q := range s.GetQuantile() {
					qs = append(qs, q.GetQuantile())
				}
				wantQ := []float64{0.5}
				if want.advanced {
					wantQ = []float64{0.5, 0.9, 0.99}
				}
				if !slices.Equal(qs, wantQ) {
					t.Errorf("%s quantiles %v, want %v", name, qs, wantQ)
				}
			}
		}
	}
	for _, name := range []string{"znode_count", "watch_count", "outstanding_requests", "avg_latency", "max_latency",
		"num_alive_connections", "packets_received", "packets_sent", "ephemerals_count", "approximate_data_size",
		"readlatency", "updatelatency", "fsynctime", "sync_processor_batch_size", "bytes_received_count",
		"zoo_raft_term", "zoo_applied_index", "zoo_fsync_duration_seconds", "zoo_throttled_requests", "go_goroutines", "process_open_fds"} {
		if fams[name] == nil {
			t.Errorf("/metrics lacks %s", name)
		}
	}
	if n := fams["updatelatency"].GetMetric()[0].GetSummary().GetSampleCount(); n < 1 {
		t.Errorf("updatelatency count %d after a create", n)
	}
	if v := fams["znode_count"].GetMetric()[0].GetGauge().GetValue(); v < 6 {
		t.Errorf("znode_count %v", v)
	}
}

// Without exportJvmInfo, no runtime metrics.
func TestPrometheusNoRuntime(t *testing.T) {
	_, _, srv := startZoo(t)
	reg := prometheus.NewRegistry()
	if err := RegisterMetrics(reg, srv.Metrics(), false); err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(MetricsHandler(reg))
	defer hs.Close()
	fams := scrape(t, hs.URL+"/metrics")
	if fams["go_goroutines"] != nil || fams["znode_count"] == nil {
		t.Fatalf("families: %d, go_goroutines %v", len(fams), fams["go_goroutines"] != nil)
	}
}
