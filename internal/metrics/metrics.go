// Package metrics holds the server's counters, gauges and summaries under
// Apache ZooKeeper's metric names (ServerMetrics, ZooKeeperServer's
// gauges), so that mntr, the AdminServer's monitor command and the
// Prometheus endpoint all show the same quantities with the names that
// operators' dashboards and alert rules already use.
//
// A Set is created by the server and passed to whatever exports it; there
// is no global registry. Every metric is safe for concurrent use.
package metrics

import (
	"slices"
	"sync"
	"sync/atomic"
)

// Kind is what a metric is, as Prometheus types it.
type Kind int

// The kinds of metric.
const (
	KindCounter   Kind = iota // only goes up (until a stats reset)
	KindGauge                 // a value read when exported
	KindSummary               // count, sum, min, max and quantiles of samples
	KindHistogram             // counts of samples in fixed buckets
)

// Histogram counts samples in buckets with fixed upper bounds, for
// Prometheus histograms (Zoo's own metrics; Apache has none).
type Histogram struct {
	bounds []float64
	mu     sync.Mutex
	counts []uint64 // per bucket, not cumulative; the last is +Inf
	sum    float64
	count  uint64
}

// Observe adds a sample.
func (h *Histogram) Observe(v float64) {
	i, _ := slices.BinarySearch(h.bounds, v)
	h.mu.Lock()
	h.counts[i]++
	h.sum += v
	h.count++
	h.mu.Unlock()
}

// HistogramValue is a histogram at one moment.
type HistogramValue struct {
	Count uint64
	Sum   float64
	// Buckets maps each upper bound to the samples at or below it
	// (cumulative, as Prometheus counts them).
	Buckets map[float64]uint64
}

// Value returns the histogram's current counts.
func (h *Histogram) Value() HistogramValue {
	h.mu.Lock()
	defer h.mu.Unlock()
	v := HistogramValue{Count: h.count, Sum: h.sum, Buckets: make(map[float64]uint64, len(h.bounds))}
	var cum uint64
	for i, b := range h.bounds {
		cum += h.counts[i]
		v.Buckets[b] = cum
	}
	return v
}

func (h *Histogram) reset() {
	h.mu.Lock()
	clear(h.counts)
	h.sum, h.count = 0, 0
	h.mu.Unlock()
}

// ExponentialBounds returns n bucket bounds from start, each factor times
// the one before.
func ExponentialBounds(start, factor float64, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = start
		start *= factor
	}
	return out
}

// Counter is a count that only goes up.
type Counter struct{ v atomic.Int64 }

// Add adds d to the counter.
func (c *Counter) Add(d int64) { c.v.Add(d) }

// Inc adds one.
func (c *Counter) Inc() { c.v.Add(1) }

// Value returns the count.
func (c *Counter) Value() int64 { return c.v.Load() }

// reservoirSize is how many recent samples a summary keeps for its
// quantiles, as Apache's AvgMinMaxPercentileCounter keeps about a thousand.
const reservoirSize = 1024

// Summary is Apache's AvgMinMaxCounter, and with quantiles its
// AvgMinMaxPercentileCounter: count, sum, min and max of every sample,
// and the most recent reservoirSize samples for quantiles.
type Summary struct {
	quantiles bool

	mu                   sync.Mutex
	count, sum, min, max int64
	ring                 []int64
	next                 int
}

// Observe adds a sample.
func (s *Summary) Observe(v int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.count == 0 || v < s.min {
		s.min = v
	}
	if s.count == 0 || v > s.max {
		s.max = v
	}
	s.count++
	s.sum += v
	if len(s.ring) < reservoirSize {
		s.ring = append(s.ring, v)
		return
	}
	s.ring[s.next] = v
	s.next = (s.next + 1) % reservoirSize
}

func (s *Summary) reset() {
	s.mu.Lock()
	s.count, s.sum, s.min, s.max = 0, 0, 0, 0
	s.ring, s.next = s.ring[:0], 0
	s.mu.Unlock()
}

// SummaryValue is a summary at one moment.
type SummaryValue struct {
	Count, Sum, Min, Max int64
	// Quantiles holds P50, P95, P99 and P999 (Apache's mntr quantiles)
	// when the summary keeps them; nil otherwise.
	Quantiles []int64
	// Recent are the most recent samples, sorted, for other quantiles
	// (Prometheus's).
	Recent []int64
}

// MntrQuantiles are the quantiles mntr prints, in its order (p50, p95,
// p99, p999).
var MntrQuantiles = []float64{0.5, 0.95, 0.99, 0.999}

// Value returns the summary's current values.
func (s *Summary) Value() SummaryValue {
	s.mu.Lock()
	v := SummaryValue{Count: s.count, Sum: s.sum, Min: s.min, Max: s.max, Recent: slices.Clone(s.ring)}
	s.mu.Unlock()
	slices.Sort(v.Recent)
	if s.quantiles {
		for _, q := range MntrQuantiles {
			v.Quantiles = append(v.Quantiles, Quantile(v.Recent, q))
		}
	}
	return v
}

// Detailed reports whether the summary keeps quantiles for mntr (Apache's
// DetailLevel.ADVANCED).
func (v SummaryValue) Detailed() bool { return v.Quantiles != nil }

// Quantile returns the q-quantile of sorted samples (the nearest rank), 0
// when there are none.
func Quantile(sorted []int64, q float64) int64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(q*float64(len(sorted))+0.5) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// Avg returns the mean, 0 with no samples.
func (v SummaryValue) Avg() float64 {
	if v.Count == 0 {
		return 0
	}
	return float64(v.Sum) / float64(v.Count)
}

// Metric is one metric of a Set, as Each reports it.
type Metric struct {
	Name string
	Kind Kind
	// Value is a counter's count or a gauge's reading.
	Value float64
	// Summary is set for KindSummary.
	Summary SummaryValue
	// Histogram is set for KindHistogram.
	Histogram HistogramValue
	// Help is a one-line description; Apache uses the name.
	Help string
	// Labels are a labelled gauge's label names and values, in pairs
	// ("peer", "2"); nil for most metrics.
	Labels []string
}

// Set is a named collection of metrics.
type Set struct {
	mu        sync.Mutex
	counters  map[string]*Counter
	summaries map[string]*Summary
	gauges    map[string]func() float64
	hists     map[string]*Histogram
	help      map[string]string
	groups    []func(emit func(Metric))
}

// NewSet returns an empty set.
func NewSet() *Set {
	return &Set{
		counters:  map[string]*Counter{},
		summaries: map[string]*Summary{},
		gauges:    map[string]func() float64{},
		hists:     map[string]*Histogram{},
		help:      map[string]string{},
	}
}

// Counter returns the counter called name, creating it.
func (s *Set) Counter(name string) *Counter {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.counters[name]
	if c == nil {
		c = &Counter{}
		s.counters[name] = c
	}
	return c
}

// Summary returns the summary called name, creating it; quantiles asks
// for p50..p999 (Apache's DetailLevel.ADVANCED).
func (s *Set) Summary(name string, quantiles bool) *Summary {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.summaries[name]
	if m == nil {
		m = &Summary{quantiles: quantiles}
		s.summaries[name] = m
	}
	return m
}

// Histogram returns the histogram called name, creating it with bounds
// (sorted upper bounds; +Inf is implied).
func (s *Set) Histogram(name string, bounds []float64) *Histogram {
	s.mu.Lock()
	defer s.mu.Unlock()
	h := s.hists[name]
	if h == nil {
		h = &Histogram{bounds: slices.Clone(bounds), counts: make([]uint64, len(bounds)+1)}
		s.hists[name] = h
	}
	return h
}

// Gauge registers fn as the gauge called name, replacing any other.
func (s *Set) Gauge(name string, fn func() float64) {
	s.mu.Lock()
	s.gauges[name] = fn
	s.mu.Unlock()
}

// Group registers fn, which emits several gauges computed together (from
// one read of the server's state) each time the set is read. The metrics
// it emits must be gauges, with names no other metric of the set has.
func (s *Set) Group(fn func(emit func(Metric))) {
	s.mu.Lock()
	s.groups = append(s.groups, fn)
	s.mu.Unlock()
}

// Describe sets the help text of a metric (Zoo's own metrics have one;
// Apache's use their name).
func (s *Set) Describe(name, help string) {
	s.mu.Lock()
	s.help[name] = help
	s.mu.Unlock()
}

// Each calls fn for every metric: gauges, then counters, then summaries,
// then histograms, each by name, then the groups' gauges in the order they emit them.
// Gauges are read during the call, outside the set's lock.
func (s *Set) Each(fn func(Metric)) { s.each(fn, true) }

func (s *Set) each(fn func(Metric), gauges bool) {
	s.mu.Lock()
	counters := sortedKeys(s.counters)
	summaries := sortedKeys(s.summaries)
	hists := sortedKeys(s.hists)
	var gaugeNames []string
	if gauges {
		gaugeNames = sortedKeys(s.gauges)
	}
	cs, ss, gs, hs := s.counters, s.summaries, s.gauges, s.hists
	help := func(n string) string {
		if h := s.help[n]; h != "" {
			return h
		}
		return n
	}
	type entry struct {
		m Metric
		c *Counter
		s *Summary
		h *Histogram
		g func() float64
	}
	var entries []entry
	for _, n := range gaugeNames {
		entries = append(entries, entry{m: Metric{Name: n, Kind: KindGauge, Help: help(n)}, g: gs[n]})
	}
	for _, n := range counters {
		entries = append(entries, entry{m: Metric{Name: n, Kind: KindCounter, Help: help(n)}, c: cs[n]})
	}
	for _, n := range summaries {
		entries = append(entries, entry{m: Metric{Name: n, Kind: KindSummary, Help: help(n)}, s: ss[n]})
	}
	for _, n := range hists {
		entries = append(entries, entry{m: Metric{Name: n, Kind: KindHistogram, Help: help(n)}, h: hs[n]})
	}
	var groups []func(emit func(Metric))
	if gauges {
		groups = slices.Clone(s.groups)
	}
	s.mu.Unlock()
	for _, e := range entries {
		switch {
		case e.g != nil:
			e.m.Value = e.g()
		case e.c != nil:
			e.m.Value = float64(e.c.Value())
		case e.h != nil:
			e.m.Histogram = e.h.Value()
		default:
			e.m.Summary = e.s.Value()
		}
		fn(e.m)
	}
	for _, g := range groups {
		g(func(m Metric) {
			m.Kind = KindGauge
			if m.Help == "" {
				m.Help = m.Name
			}
			fn(m)
		})
	}
}

// EachRecorded is Each for the counters and summaries only: what the
// server records, as opposed to gauges, which read the server's state.
func (s *Set) EachRecorded(fn func(Metric)) {
	s.each(fn, false)
}

// Reset zeroes every counter and summary (srst, stat_reset); gauges read
// live values and are left alone.
func (s *Set) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.counters {
		c.v.Store(0)
	}
	for _, m := range s.summaries {
		m.reset()
	}
	for _, h := range s.hists {
		h.reset()
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
