package main

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zoohq/zoo/internal/bench"
	"github.com/zoohq/zoo/internal/zktest/inproc"
)

func startBenchServer(t *testing.T) string {
	t.Helper()
	return inproc.Standalone(t)
}

func TestBenchMixWritesJSONAndSVG(t *testing.T) {
	addr := startBenchServer(t)
	dir := t.TempDir()
	jsonPath, svgPath := filepath.Join(dir, "r.json"), filepath.Join(dir, "r.svg")
	var out, errOut bytes.Buffer
	err := benchMain(context.Background(), []string{"mix", "-servers", addr, "-clients", "2", "-outstanding", "3",
		"-keys", "5", "-size", "20", "-read-ratio", "0,50,1", "-duration", "200ms", "-warmup", "0s",
		"-json", jsonPath, "-svg", svgPath}, &out, &errOut)
	if err != nil {
		t.Fatalf("%v\n%s%s", err, out.String(), errOut.String())
	}
	if n := strings.Count(out.String(), "errors: 0 (valid)"); n != 3 {
		t.Errorf("%d valid runs printed, want 3:\n%s", n, out.String())
	}
	if !strings.Contains(errOut.String(), "mix 100% reads") {
		t.Errorf("no progress line on stderr: %q", errOut.String())
	}
	raw, err := os.ReadFile(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	var rep bench.Report
	if err := json.Unmarshal(raw, &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Results) != 3 {
		t.Fatalf("%d results in the JSON, want 3", len(rep.Results))
	}
	for i, want := range []float64{0, 50, 100} {
		r := rep.Results[i]
		if r.ReadPercent != want || !r.Valid || r.Ops != r.Reads+r.Writes || r.Latency.Count != r.Ops {
			t.Errorf("result %d: read %v%% valid %v ops %d reads %d writes %d histogram %d",
				i, r.ReadPercent, r.Valid, r.Ops, r.Reads, r.Writes, r.Latency.Count)
		}
	}
	svg, err := os.ReadFile(svgPath)
	if err != nil {
		t.Fatal(err)
	}
	polylines := 0
	d := xml.NewDecoder(bytes.NewReader(svg))
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("SVG is not XML: %v", err)
		}
		if e, ok := tok.(xml.StartElement); ok && e.Name.Local == "polyline" {
			polylines++
		}
	}
	if polylines != 4 { // one throughput line, three CDFs
		t.Errorf("%d polylines in the SVG, want 4", polylines)
	}
}

func TestBenchOtherWorkloads(t *testing.T) {
	addr := startBenchServer(t)
	for _, args := range [][]string{
		{"create-delete", "-workers", "2", "-count", "10"},
		{"barrier", "-clients", "3", "-barriers", "2"},
		{"fill", "-znodes", "30", "-clients", "2", "-outstanding", "2", "-fanout", "10"},
	} {
		var out bytes.Buffer
		err := benchMain(context.Background(), append(args, "-servers", addr, "-quiet"), &out, io.Discard)
		if err != nil || !strings.Contains(out.String(), args[0]+": servers=1") || !strings.Contains(out.String(), "errors: 0 (valid)") {
			t.Errorf("%v: %v\n%s", args, err, out.String())
		}
	}
	// A second fill of the same znodes fails every create: reported, and
	// the command fails.
	var out bytes.Buffer
	err := benchMain(context.Background(), []string{"fill", "-znodes", "30", "-fanout", "10", "-servers", addr, "-quiet"}, &out, io.Discard)
	if !errors.Is(err, errInvalidRun) || !strings.Contains(out.String(), "ERRORS: 30") {
		t.Errorf("refill: %v\n%s", err, out.String())
	}
}

func TestBenchBadArguments(t *testing.T) {
	for _, args := range [][]string{
		nil,
		{"nosuch"},
		{"mix", "-read-ratio", "150"},
		{"mix", "-read-ratio", "x"},
		{"mix", "-server-pids", "12,abc"},
		{"mix", "extra"},
		{"barrier", "-clients", "0", "-servers", "127.0.0.1:1"},
	} {
		if err := benchMain(context.Background(), args, io.Discard, io.Discard); err == nil {
			t.Errorf("%v: no error", args)
		}
	}
	if err := benchMain(context.Background(), []string{"mix", "-h"}, io.Discard, io.Discard); err != nil {
		t.Errorf("mix -h: %v", err)
	}
}

func TestParseReadRatios(t *testing.T) {
	got, err := parseReadRatios("0, 0.5,1,50,100")
	want := []float64{0, 50, 100, 50, 100}
	if err != nil || len(got) != len(want) {
		t.Fatalf("%v, %v", got, err)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("ratio %d = %v, want %v", i, got[i], want[i])
		}
	}
}
