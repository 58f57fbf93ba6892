package bench

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

const scaleRaw = `some log line
RESULT mode=env nservers=1 date=2026-11-25T17:04Z
RESULT target=zoo axis=znodes point=10000 rep=1 mode=ops op=set srv_us_per_op=20 p99_ms=50 valid=true
RESULT target=zoo axis=znodes point=10000 rep=2 mode=ops op=set srv_us_per_op=30 p99_ms=70 valid=true
RESULT target=zoo axis=znodes point=10000 rep=3 mode=ops op=set srv_us_per_op=1000 p99_ms=900 valid=false
RESULT target=zoo axis=znodes point=1000000 rep=1 mode=ops op=set srv_us_per_op=40 p99_ms=80 valid=true
RESULT target=apache axis=znodes point=10000 rep=1 mode=ops op=set srv_us_per_op=60 p99_ms=60 valid=true
RESULT target=apache axis=znodes point=1000000 rep=1 mode=ops op=set srv_us_per_op=90 p99_ms=90 valid=true
RESULT target=zoo axis=znodes point=10000 rep=1 mode=state label=loaded rss_kb=102400 valid=true
RESULT target=zoo axis=znodes point=10000 rep=1 mode=restartstate rss_kb=999999 valid=true
RESULT target=zoo axis=sessions point=tree rep=1 mode=fill count=10000 valid=true
RESULT target=zoo axis=sessions point=100 rep=1 mode=sessidle rss_kb=2048
RESULT target=zoo axis=sessions point=100 rep=1 mode=ops op=get srv_us_per_op=10 p99_ms=5 valid=true
`

func seriesByName(t *testing.T, c *Chart, name string) Series {
	t.Helper()
	for _, s := range c.Series {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("chart %q has no series %q", c.Title, name)
	return Series{}
}

func TestScaleChartsMedianPerPoint(t *testing.T) {
	recs, err := ReadScale(strings.NewReader(scaleRaw))
	if err != nil {
		t.Fatal(err)
	}
	if got := Axes(recs); len(got) != 2 || got[0] != "znodes" || got[1] != "sessions" {
		t.Fatalf("axes %v, want [znodes sessions]", got)
	}
	charts := ScaleCharts(recs, "znodes")
	if len(charts) != 3 {
		t.Fatalf("%d charts, want CPU, p99 and RSS", len(charts))
	}
	cpu, p99, rss := charts[0], charts[1], charts[2]
	if !cpu.LogX {
		t.Error("10k to 1M znodes is not drawn on a log axis")
	}
	// The median of the valid repetitions; the invalid one is left out.
	zoo := seriesByName(t, cpu, "zoo setData")
	if len(zoo.Points) != 2 || zoo.Points[0] != (XY{10000, 25}) || zoo.Points[1] != (XY{1e6, 40}) {
		t.Errorf("zoo setData points %v, want [{10000 25} {1e6 40}]", zoo.Points)
	}
	apache := seriesByName(t, cpu, "apache setData")
	if !apache.Dashed || zoo.Dashed || apache.Group != zoo.Group {
		t.Errorf("apache %+v and zoo %+v: want one colour, apache dashed", apache, zoo)
	}
	if got := seriesByName(t, p99, "zoo setData").Points[0].Y; got != 60 {
		t.Errorf("p99 median %v, want 60", got)
	}
	// RSS after loading, in MiB; not the one after a restart.
	if pts := seriesByName(t, rss, "zoo").Points; len(pts) != 1 || pts[0] != (XY{10000, 100}) {
		t.Errorf("RSS points %v, want [{10000 100}]", pts)
	}
	// The sessions axis skips its tree fill (point=tree).
	sess := ScaleCharts(recs, "sessions")
	if len(sess) != 3 || sess[0].LogX {
		t.Fatalf("sessions: %d charts (log x %v), want 3 on a linear axis", len(sess), len(sess) > 0 && sess[0].LogX)
	}
	var svg bytes.Buffer
	if err := WriteSVG(&svg, charts...); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(svg.String(), `stroke-dasharray`) || strings.Count(svg.String(), "<polyline") != 5 {
		t.Errorf("SVG lacks the dashed Apache lines or has the wrong number of lines:\n%s", svg.String())
	}
}

func TestReadScaleErrors(t *testing.T) {
	if _, err := ReadScale(strings.NewReader("no results here\n")); !errors.Is(err, ErrNoScaleRecords) {
		t.Errorf("input without RESULT lines: %v, want ErrNoScaleRecords", err)
	}
	if _, err := ReadScale(strings.NewReader("RESULT target=zoo junk\n")); err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Errorf("malformed field: %v, want an error naming line 1", err)
	}
}

func FuzzReadScale(f *testing.F) {
	f.Add([]byte(scaleRaw))
	f.Add([]byte("RESULT a=1 b= =c\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		recs, err := ReadScale(bytes.NewReader(data))
		if err != nil {
			return
		}
		for _, a := range Axes(recs) {
			var b bytes.Buffer
			if err := WriteSVG(&b, ScaleCharts(recs, a)...); err != nil {
				t.Fatal(err)
			}
		}
	})
}
