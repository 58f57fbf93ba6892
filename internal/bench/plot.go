package bench

import (
	"bytes"
	"cmp"
	"fmt"
	"html"
	"io"
	"math"
	"slices"
	"strconv"
)

// The plots are SVG written by hand: two kinds of line chart need no
// plotting library, and SVG opens in every browser and renders on GitHub.

// XY is one point of a series.
type XY struct{ X, Y float64 }

// Series is one line of a chart.
type Series struct {
	Name   string
	Points []XY
	// Series with the same non-empty Group share a colour (one
	// operation on two servers); Dashed tells them apart.
	Group  string
	Dashed bool
}

// Chart is one panel: a line chart with linear y and linear or log10 x.
type Chart struct {
	Title, XLabel, YLabel string
	LogX                  bool
	YMax                  float64 // 0: from the data
	Marks                 bool    // mark every measured point
	Series                []Series
}

// Geometry of a panel, in SVG user units.
const (
	panelW, panelH         = 760.0, 380.0
	marginL, marginR       = 80.0, 190.0
	marginT, marginB       = 40.0, 55.0
	plotW, plotH           = panelW - marginL - marginR, panelH - marginT - marginB
	legendX                = panelW - marginR + 15
	fontAttrs              = `font-family="sans-serif" font-size="12"`
	gridColour, axisColour = "#ddd", "#333"
)

var palette = []string{"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf"}

// ThroughputChart plots mix results' ops/s against their read percentage,
// one line per distinct ensemble size and load (the paper's Figure 5).
// It is nil when there are no mix results.
func ThroughputChart(results []*Result) *Chart {
	lines := map[string]*Series{}
	var order []string
	for _, r := range results {
		if r.Workload != "mix" {
			continue
		}
		name := fmt.Sprintf("%d server(s), %dx%d", len(r.Servers), r.Clients, r.Outstanding)
		s := lines[name]
		if s == nil {
			s = &Series{Name: name}
			lines[name] = s
			order = append(order, name)
		}
		s.Points = append(s.Points, XY{r.ReadPercent, r.OpsPerSec})
	}
	if len(order) == 0 {
		return nil
	}
	c := &Chart{Title: "Throughput against read ratio (paper Figure 5)", XLabel: "reads (%)", YLabel: "operations/s"}
	for _, name := range order {
		s := lines[name]
		slices.SortFunc(s.Points, func(a, b XY) int { return cmp.Compare(a.X, b.X) })
		c.Series = append(c.Series, *s)
	}
	return c
}

// LatencyCDFChart plots each result's latency distribution: the fraction
// of operations at or below a latency, on a log scale of latency.
func LatencyCDFChart(results []*Result) *Chart {
	c := &Chart{Title: "Latency CDF", XLabel: "latency (ms, log scale)", YLabel: "fraction of operations", LogX: true, YMax: 1}
	for _, r := range results {
		if len(r.Latency.CDF) == 0 {
			continue
		}
		s := Series{Name: resultName(r)}
		for _, p := range r.Latency.CDF {
			s.Points = append(s.Points, XY{max(p.LatencyMs, 1e-3), p.Frac})
		}
		c.Series = append(c.Series, s)
	}
	return c
}

func resultName(r *Result) string {
	switch r.Workload {
	case "mix":
		return fmt.Sprintf("mix %g%% reads", r.ReadPercent)
	case "create-delete":
		return fmt.Sprintf("create (%d workers)", r.Workers)
	case "barrier":
		return fmt.Sprintf("barrier %dx%d (per client)", r.Clients, r.Barriers)
	default:
		return r.Workload
	}
}

// WriteSVG writes the charts stacked in one SVG document. Nil charts
// are left out.
func WriteSVG(w io.Writer, charts ...*Chart) error {
	var live []*Chart
	for _, c := range charts {
		if c != nil {
			live = append(live, c)
		}
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%g" height="%g" viewBox="0 0 %g %g" %s>`+"\n",
		panelW, panelH*float64(len(live)), panelW, panelH*float64(len(live)), fontAttrs)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	for i, c := range live {
		fmt.Fprintf(&b, `<g transform="translate(0,%g)">`+"\n", panelH*float64(i))
		c.render(&b)
		b.WriteString("</g>\n")
	}
	b.WriteString("</svg>\n")
	_, err := w.Write(b.Bytes())
	return err
}

// axis maps data values to plot coordinates.
type axis struct {
	lo, hi float64
	log    bool
}

func (a axis) frac(v float64) float64 {
	if a.log {
		v, lo, hi := math.Log10(v), math.Log10(a.lo), math.Log10(a.hi)
		return (v - lo) / (hi - lo)
	}
	return (v - a.lo) / (a.hi - a.lo)
}

func (c *Chart) axes() (x, y axis) {
	x = axis{lo: math.Inf(1), hi: math.Inf(-1), log: c.LogX}
	y = axis{lo: 0, hi: c.YMax}
	for _, s := range c.Series {
		for _, p := range s.Points {
			x.lo, x.hi = min(x.lo, p.X), max(x.hi, p.X)
			if c.YMax == 0 {
				y.hi = max(y.hi, p.Y)
			}
		}
	}
	if math.IsInf(x.lo, 0) { // no points
		x.lo, x.hi = 0, 1
	}
	if x.log {
		x.lo = math.Pow(10, math.Floor(math.Log10(x.lo)))
		x.hi = math.Pow(10, math.Ceil(math.Log10(x.hi)))
		if x.hi <= x.lo {
			x.hi = x.lo * 10
		}
	} else {
		x.lo, x.hi = niceRange(min(x.lo, 0), x.hi)
	}
	if c.YMax == 0 {
		_, y.hi = niceRange(0, y.hi*1.05)
	}
	return x, y
}

// niceRange widens [lo, hi] to multiples of a 1-2-5 step.
func niceRange(lo, hi float64) (float64, float64) {
	if hi <= lo {
		return lo, lo + 1
	}
	step := niceStep(hi - lo)
	return math.Floor(lo/step) * step, math.Ceil(hi/step) * step
}

// niceStep is a 1, 2 or 5 times a power of ten giving about 5 ticks.
func niceStep(span float64) float64 {
	raw := span / 5
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= raw {
			return m * p
		}
	}
	return 10 * p
}

// maxTicks bounds the ticks of an axis: data of extreme magnitude (a
// step lost in rounding) must not make the loop run forever.
const maxTicks = 64

func ticks(a axis) []float64 {
	var t []float64
	if a.log {
		for v := a.lo; v <= a.hi*1.0001 && len(t) < maxTicks; v *= 10 {
			t = append(t, v)
		}
		return t
	}
	step := niceStep(a.hi - a.lo)
	for i := 0; len(t) < maxTicks; i++ {
		v := a.lo + float64(i)*step
		if v > a.hi+step/1e6 {
			break
		}
		t = append(t, v)
	}
	return t
}

func label(v float64) string {
	switch {
	case v == 0:
		return "0"
	case math.Abs(v) >= 1e6:
		return strconv.FormatFloat(v/1e6, 'f', -1, 64) + "M"
	case math.Abs(v) >= 1e4:
		return strconv.FormatFloat(v/1e3, 'f', -1, 64) + "k"
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}

func (c *Chart) render(b *bytes.Buffer) {
	x, y := c.axes()
	px := func(v float64) float64 { return marginL + x.frac(v)*plotW }
	py := func(v float64) float64 { return marginT + (1-y.frac(v))*plotH }
	fmt.Fprintf(b, `<text x="%g" y="24" font-size="15" font-weight="bold">%s</text>`+"\n", marginL, html.EscapeString(c.Title))
	for _, v := range ticks(x) {
		fmt.Fprintf(b, `<line x1="%.1f" y1="%g" x2="%.1f" y2="%g" stroke="%s"/>`+"\n", px(v), marginT, px(v), marginT+plotH, gridColour)
		fmt.Fprintf(b, `<text x="%.1f" y="%g" text-anchor="middle">%s</text>`+"\n", px(v), marginT+plotH+16, label(v))
	}
	for _, v := range ticks(y) {
		fmt.Fprintf(b, `<line x1="%g" y1="%.1f" x2="%g" y2="%.1f" stroke="%s"/>`+"\n", marginL, py(v), marginL+plotW, py(v), gridColour)
		fmt.Fprintf(b, `<text x="%g" y="%.1f" text-anchor="end">%s</text>`+"\n", marginL-6, py(v)+4, label(v))
	}
	fmt.Fprintf(b, `<rect x="%g" y="%g" width="%g" height="%g" fill="none" stroke="%s"/>`+"\n", marginL, marginT, plotW, plotH, axisColour)
	fmt.Fprintf(b, `<text x="%g" y="%g" text-anchor="middle">%s</text>`+"\n", marginL+plotW/2, panelH-12, html.EscapeString(c.XLabel))
	fmt.Fprintf(b, `<text transform="translate(18,%g) rotate(-90)" text-anchor="middle">%s</text>`+"\n", marginT+plotH/2, html.EscapeString(c.YLabel))
	colours := map[string]string{}
	for i, s := range c.Series {
		col := palette[len(colours)%len(palette)]
		if s.Group != "" {
			if c, ok := colours[s.Group]; ok {
				col = c
			}
		}
		colours[cmp.Or(s.Group, strconv.Itoa(-i-1))] = col
		dash := ""
		if s.Dashed {
			dash = ` stroke-dasharray="6,4"`
		}
		b.WriteString(`<polyline fill="none" stroke-width="2" stroke="` + col + `"` + dash + ` points="`)
		for j, p := range s.Points {
			if j > 0 {
				b.WriteByte(' ')
			}
			fmt.Fprintf(b, "%.1f,%.1f", px(p.X), py(p.Y))
		}
		b.WriteString("\"/>\n")
		if c.Marks || len(s.Points) == 1 || !c.LogX { // mark measured points of sparse series
			for _, p := range s.Points {
				fmt.Fprintf(b, `<circle cx="%.1f" cy="%.1f" r="3" fill="%s"/>`+"\n", px(p.X), py(p.Y), col)
			}
		}
		ly := marginT + 10 + float64(i)*18
		fmt.Fprintf(b, `<line x1="%g" y1="%g" x2="%g" y2="%g" stroke="%s" stroke-width="3"%s/>`+"\n", legendX, ly, legendX+18, ly, col, dash)
		fmt.Fprintf(b, `<text x="%g" y="%g">%s</text>`+"\n", legendX+24, ly+4, html.EscapeString(s.Name))
	}
}
