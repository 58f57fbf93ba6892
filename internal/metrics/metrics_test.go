package metrics

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// A summary keeps exact count, sum, min and max over every sample, and
// quantiles over the recent ones.
func TestSummary(t *testing.T) {
	s := NewSet()
	m := s.Summary("readlatency", true)
	if v := m.Value(); v.Count != 0 || v.Min != 0 || v.Max != 0 || v.Avg() != 0 || !slices.Equal(v.Quantiles, []int64{0, 0, 0, 0}) {
		t.Fatalf("empty summary %+v", v)
	}
	for i := int64(1); i <= 1000; i++ {
		m.Observe(i)
	}
	v := m.Value()
	if v.Count != 1000 || v.Sum != 500500 || v.Min != 1 || v.Max != 1000 || v.Avg() != 500.5 {
		t.Fatalf("summary %+v", v)
	}
	if want := []int64{500, 950, 990, 999}; !slices.Equal(v.Quantiles, want) {
		t.Fatalf("quantiles %v, want %v", v.Quantiles, want)
	}
	// The reservoir holds the newest samples only.
	for range 2 * reservoirSize {
		m.Observe(5000)
	}
	if v := m.Value(); v.Quantiles[0] != 5000 || v.Min != 1 || v.Count != 1000+2*reservoirSize {
		t.Fatalf("after more samples %+v", v)
	}
	s.Reset()
	if v := m.Value(); v.Count != 0 || v.Max != 0 || v.Quantiles[3] != 0 {
		t.Fatalf("after reset %+v", v)
	}
}

// Each reports gauges, then counters, then summaries, each by name, with
// current values; Reset leaves gauges alone.
func TestSetEach(t *testing.T) {
	s := NewSet()
	s.Counter("b_count").Add(3)
	s.Counter("a_count").Inc()
	s.Summary("fsynctime", false).Observe(7)
	g := 1.5
	s.Gauge("znode_count", func() float64 { return g })
	s.Describe("a_count", "the a's")
	var got []Metric
	s.Each(func(m Metric) { got = append(got, m) })
	names := []string{}
	for _, m := range got {
		names = append(names, m.Name)
	}
	if want := []string{"znode_count", "a_count", "b_count", "fsynctime"}; !slices.Equal(names, want) {
		t.Fatalf("order %v, want %v", names, want)
	}
	if got[0].Value != 1.5 || got[1].Value != 1 || got[1].Help != "the a's" || got[2].Value != 3 || got[2].Help != "b_count" ||
		got[3].Summary.Count != 1 || got[3].Summary.Quantiles != nil {
		t.Fatalf("values %+v", got)
	}
	s.Reset()
	s.Each(func(m Metric) {
		if m.Kind == KindGauge && m.Value != 1.5 || m.Kind == KindCounter && m.Value != 0 {
			t.Errorf("after reset %+v", m)
		}
	})
}

// Concurrent use is safe (run with -race).
func TestConcurrent(t *testing.T) {
	s := NewSet()
	done := make(chan struct{})
	for range 4 {
		go func() {
			defer func() { done <- struct{}{} }()
			for range 1000 {
				s.Summary("x", true).Observe(rand.Int64N(100))
				s.Counter("y").Inc()
			}
		}()
	}
	for range 4 {
		<-done
	}
	if v := s.Summary("x", true).Value(); v.Count != 4000 {
		t.Fatalf("count %d", v.Count)
	}
}

// A histogram counts each sample in the first bucket whose bound is at or
// above it, cumulatively, as Prometheus does.
func TestHistogram(t *testing.T) {
	s := NewSet()
	h := s.Histogram("zoo_fsync_duration_seconds", ExponentialBounds(0.001, 10, 3)) // 1ms, 10ms, 100ms
	for _, v := range []float64{0.0005, 0.001, 0.005, 0.05, 2} {
		h.Observe(v)
	}
	var got HistogramValue
	s.Each(func(m Metric) {
		if m.Kind == KindHistogram {
			got = m.Histogram
		}
	})
	if got.Count != 5 || got.Sum != 2.0565 || got.Buckets[0.001] != 2 || got.Buckets[0.01] != 3 || got.Buckets[0.1] != 4 {
		t.Fatalf("histogram %+v", got)
	}
	s.Reset()
	if v := h.Value(); v.Count != 0 || v.Buckets[0.1] != 0 {
		t.Fatalf("after reset %+v", v)
	}
}
