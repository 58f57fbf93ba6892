package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBenchPlotScale: zoo bench plot draws the cost curve of a scale.sh
// raw file, Apache beside the candidate.
func TestBenchPlotScale(t *testing.T) {
	dir := t.TempDir()
	raw := filepath.Join(dir, "scale.raw")
	lines := `RESULT target=zoo axis=znodes point=10000 rep=1 mode=ops op=set srv_us_per_op=25 p99_ms=50 valid=true
RESULT target=zoo axis=znodes point=1000000 rep=1 mode=ops op=set srv_us_per_op=50 p99_ms=90 valid=true
RESULT target=apache axis=znodes point=10000 rep=1 mode=ops op=set srv_us_per_op=60 p99_ms=60 valid=true
RESULT target=apache axis=znodes point=1000000 rep=1 mode=ops op=set srv_us_per_op=90 p99_ms=80 valid=true
`
	if err := os.WriteFile(raw, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "cost.svg")
	var stdout, stderr bytes.Buffer
	if err := benchMain(context.Background(), []string{"plot", "-o", out, raw}, &stdout, &stderr); err != nil {
		t.Fatalf("zoo bench plot: %v\n%s", err, stderr.String())
	}
	svg, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<svg", "Server CPU per operation against znodes", "apache setData", "zoo setData", "log scale"} {
		if !strings.Contains(string(svg), want) {
			t.Errorf("the SVG lacks %q", want)
		}
	}
	if err := benchMain(context.Background(), []string{"plot", filepath.Join(dir, "missing.raw")}, &stdout, &stderr); err == nil {
		t.Error("a missing input was not an error")
	}
}
