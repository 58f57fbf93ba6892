package bench

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"
)

func mixResult(servers int, readPct, opsPerSec float64) *Result {
	var h Hist
	for i := 1; i <= 100; i++ {
		h.Record(time.Duration(i) * 50 * time.Microsecond)
	}
	return &Result{Workload: "mix", Servers: make([]string, servers), Clients: 2, Outstanding: 3,
		ReadPercent: readPct, OpsPerSec: opsPerSec, Latency: summarize(&h)}
}

func TestThroughputChartGroupsAndSorts(t *testing.T) {
	rs := []*Result{mixResult(1, 100, 900), mixResult(3, 0, 100), mixResult(1, 0, 200), mixResult(1, 50, 500),
		{Workload: "fill"}}
	c := ThroughputChart(rs)
	if c == nil || len(c.Series) != 2 {
		t.Fatalf("chart %+v; want two series (1 and 3 servers)", c)
	}
	one := c.Series[0]
	want := []XY{{0, 200}, {50, 500}, {100, 900}}
	if len(one.Points) != 3 || one.Points[0] != want[0] || one.Points[1] != want[1] || one.Points[2] != want[2] {
		t.Errorf("1-server series %v, want %v", one.Points, want)
	}
	if ThroughputChart([]*Result{{Workload: "barrier"}}) != nil {
		t.Error("a throughput chart without mix results")
	}
}

// svgShapes parses the SVG as XML and returns the polylines' points and
// the texts.
func svgShapes(t *testing.T, doc []byte) (lines [][]XY, texts []string, w, h float64) {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(doc))
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			t.Fatalf("not XML: %v\n%s", err, doc)
		}
		switch e := tok.(type) {
		case xml.StartElement:
			for _, a := range e.Attr {
				switch {
				case e.Name.Local == "svg" && a.Name.Local == "width":
					w, _ = strconv.ParseFloat(a.Value, 64)
				case e.Name.Local == "svg" && a.Name.Local == "height":
					h, _ = strconv.ParseFloat(a.Value, 64)
				case e.Name.Local == "polyline" && a.Name.Local == "points":
					var pts []XY
					for _, p := range strings.Fields(a.Value) {
						x, y, _ := strings.Cut(p, ",")
						fx, err1 := strconv.ParseFloat(x, 64)
						fy, err2 := strconv.ParseFloat(y, 64)
						if err1 != nil || err2 != nil {
							t.Fatalf("bad point %q", p)
						}
						pts = append(pts, XY{fx, fy})
					}
					lines = append(lines, pts)
				}
			}
		case xml.CharData:
			if s := strings.TrimSpace(string(e)); s != "" {
				texts = append(texts, s)
			}
		}
	}
}

func TestWriteSVG(t *testing.T) {
	rs := []*Result{mixResult(1, 0, 12000), mixResult(1, 100, 48000), {Workload: "create-delete", Workers: 2}}
	rs[2].Latency = rs[0].Latency
	var buf bytes.Buffer
	if err := WriteSVG(&buf, ThroughputChart(rs), nil, LatencyCDFChart(rs)); err != nil {
		t.Fatal(err)
	}
	lines, texts, w, h := svgShapes(t, buf.Bytes())
	if w != panelW || h != 2*panelH {
		t.Errorf("size %gx%g, want two panels", w, h)
	}
	// one throughput line, three CDF lines
	if len(lines) != 4 || len(lines[0]) != 2 {
		t.Fatalf("%d polylines (first %v); want 4", len(lines), lines[0])
	}
	// Every point lies inside its panel's plot area.
	for i, l := range lines {
		for _, p := range l {
			if p.X < marginL-0.1 || p.X > marginL+plotW+0.1 || p.Y < marginT-0.1 || p.Y > marginT+plotH+0.1 {
				t.Errorf("line %d point %v outside the plot area", i, p)
			}
		}
	}
	// The throughput rises from 0% to 100% reads: y goes up the page.
	if lines[0][1].Y >= lines[0][0].Y {
		t.Errorf("higher throughput drawn lower: %v", lines[0])
	}
	joined := strings.Join(texts, "|")
	for _, want := range []string{"Throughput against read ratio", "Latency CDF", "mix 0% reads", "mix 100% reads", "create (2 workers)", "60k"} {
		if !strings.Contains(joined, want) {
			t.Errorf("no text %q in %s", want, joined)
		}
	}
}

func TestSVGEscapesNames(t *testing.T) {
	c := &Chart{Title: `a<b & "c"`, Series: []Series{{Name: "<script>", Points: []XY{{1, 1}}}}}
	var buf bytes.Buffer
	if err := WriteSVG(&buf, c); err != nil {
		t.Fatal(err)
	}
	_, texts, _, _ := svgShapes(t, buf.Bytes())
	if !strings.Contains(strings.Join(texts, "|"), `a<b & "c"`) || strings.Contains(buf.String(), "<script>") {
		t.Errorf("names not escaped:\n%s", buf.String())
	}
}

func TestNiceRange(t *testing.T) {
	for _, tt := range []struct{ lo, hi, wlo, whi float64 }{
		{0, 47123, 0, 50000},
		{0, 1, 0, 1},
		{0, 0.37, 0, 0.4},
		{0, 100, 0, 100},
		{5, 5, 5, 6},
	} {
		if lo, hi := niceRange(tt.lo, tt.hi); lo != tt.wlo || hi != tt.whi {
			t.Errorf("niceRange(%v, %v) = %v, %v; want %v, %v", tt.lo, tt.hi, lo, hi, tt.wlo, tt.whi)
		}
	}
}
