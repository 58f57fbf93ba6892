package bench

import (
	"bufio"
	"cmp"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
)

// The cost curve (issue 14) is measured by shared/bench's scale.sh, which
// pairs a candidate with Apache on the same cores and writes one RESULT
// line of key=value fields per measurement. These functions read those
// lines and draw how cost grows with the state: server CPU per operation,
// p99 latency and RSS against znodes, sessions or watches.

// ScaleRecord is one RESULT line: its fields by key.
type ScaleRecord map[string]string

// ErrNoScaleRecords: the input held no RESULT line.
var ErrNoScaleRecords = errors.New("bench: no RESULT lines in the input")

// ReadScale reads scale.sh's raw output: lines "RESULT key=value ...";
// other lines are skipped.
func ReadScale(r io.Reader) ([]ScaleRecord, error) {
	var out []ScaleRecord
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for line := 1; sc.Scan(); line++ {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 || fields[0] != "RESULT" {
			continue
		}
		rec := ScaleRecord{}
		for _, f := range fields[1:] {
			k, v, ok := strings.Cut(f, "=")
			if !ok || k == "" {
				return nil, fmt.Errorf("line %d: field %q is not key=value", line, f)
			}
			rec[k] = v
		}
		out = append(out, rec)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, ErrNoScaleRecords
	}
	return out, nil
}

func (r ScaleRecord) num(key string) (float64, bool) {
	v, err := strconv.ParseFloat(r[key], 64)
	return v, err == nil && !math.IsInf(v, 0) && !math.IsNaN(v)
}

// opNames are the names scale.sh's ops go by in a chart.
var opNames = map[string]string{
	"get": "getData", "get-sessions": "getData", "set": "setData", "cd": "create+delete",
	"set-unwatched": "setData", "set-watched": "setData firing a watch",
}

// Axes returns the axes present in records, in the order first seen.
func Axes(records []ScaleRecord) []string {
	var out []string
	for _, r := range records {
		if a := r["axis"]; a != "" && !slices.Contains(out, a) {
			out = append(out, a)
		}
	}
	return out
}

// ScaleCharts returns the charts of one axis: server CPU per operation
// and p99 latency of each operation, and RSS, against the axis's points,
// one line per server and operation, each point the median of its
// repetitions. Invalid runs are left out.
func ScaleCharts(records []ScaleRecord, axis string) []*Chart {
	xlabel := map[string]string{"znodes": "znodes", "sessions": "idle sessions", "watches": "watches"}[axis]
	if xlabel == "" {
		xlabel = axis
	}
	servers := ""
	for _, r := range records {
		if r["mode"] == "env" && r["nservers"] != "" && r["nservers"] != "1" {
			servers = fmt.Sprintf(", %s servers (summed)", r["nservers"])
		}
	}
	cpu := newCurves("Server CPU per operation against "+xlabel+servers, xlabel, "µs of server CPU per op")
	p99 := newCurves("p99 latency against "+xlabel, xlabel, "p99 latency (ms)")
	rss := newCurves("Server RSS against "+xlabel+servers, xlabel, "RSS (MiB)")
	for _, r := range records {
		x, ok := r.num("point")
		if r["axis"] != axis || !ok || r["valid"] == "false" {
			continue
		}
		target := r["target"]
		switch r["mode"] {
		case "ops":
			op := cmp.Or(opNames[r["op"]], r["op"])
			if v, ok := r.num("srv_us_per_op"); ok {
				cpu.add(target, op, x, v)
			}
			if v, ok := r.num("p99_ms"); ok {
				p99.add(target, op, x, v)
			}
		case "state", "sessidle", "watchload":
			if r["mode"] == "state" && r["label"] != "loaded" {
				continue
			}
			if v, ok := r.num("rss_kb"); ok {
				rss.add(target, "", x, v/1024)
			}
		}
	}
	var out []*Chart
	for _, c := range []*curves{cpu, p99, rss} {
		if ch := c.chart(); ch != nil {
			out = append(out, ch)
		}
	}
	return out
}

// curves gathers samples by series and x, for medians.
type curves struct {
	title, xlabel, ylabel string
	order                 []string
	samples               map[string]map[float64][]float64
	groups                map[string]string // series name → its operation
	dashed                map[string]bool   // Apache's series
}

func newCurves(title, xlabel, ylabel string) *curves {
	return &curves{title: title, xlabel: xlabel, ylabel: ylabel, samples: map[string]map[float64][]float64{},
		groups: map[string]string{}, dashed: map[string]bool{}}
}

// add records y at x for target's op (op "" for a measure of the server).
// Apache's lines are dashed, and an operation has one colour.
func (c *curves) add(target, op string, x, y float64) {
	series := strings.TrimSpace(target + " " + op)
	m := c.samples[series]
	if m == nil {
		m = map[float64][]float64{}
		c.samples[series] = m
		c.order = append(c.order, series)
		c.groups[series] = op
		c.dashed[series] = target == "apache"
	}
	m[x] = append(m[x], y)
}

// chart is nil when there are no samples. The x axis is logarithmic when
// every x is positive and they span at least a factor of ten.
func (c *curves) chart() *Chart {
	if len(c.order) == 0 {
		return nil
	}
	ch := &Chart{Title: c.title, XLabel: c.xlabel, YLabel: c.ylabel}
	lo, hi := math.Inf(1), math.Inf(-1)
	slices.Sort(c.order) // the same series, in the same colours, in every chart
	for _, name := range c.order {
		s := Series{Name: name, Group: c.groups[name], Dashed: c.dashed[name]}
		for x, ys := range c.samples[name] {
			s.Points = append(s.Points, XY{x, median(ys)})
			lo, hi = min(lo, x), max(hi, x)
		}
		slices.SortFunc(s.Points, func(a, b XY) int { return cmp.Compare(a.X, b.X) })
		ch.Series = append(ch.Series, s)
	}
	ch.LogX = lo > 0 && hi >= 10*lo
	if ch.LogX {
		ch.XLabel += " (log scale)"
	}
	ch.Marks = true
	return ch
}

func median(v []float64) float64 {
	s := slices.Sorted(slices.Values(v))
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
