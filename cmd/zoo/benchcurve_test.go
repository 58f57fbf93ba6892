package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/zoohq/zoo/internal/bench"
)

var quickCurve = []string{"-reps", "1", "-duration", "300ms", "-warmup", "50ms", "-prewarm", "-1s",
	"-clients", "2", "-outstanding", "4", "-fanout", "100"}

// TestBenchCurve: zoo bench curve prints scale.sh's RESULT lines and a
// table, writes them to -raw, the report to -json and the plots to
// -svg, and zoo bench plot draws the raw file.
func TestBenchCurve(t *testing.T) {
	addr := startBenchServer(t)
	dir := t.TempDir()
	raw, js, svg := filepath.Join(dir, "c.raw"), filepath.Join(dir, "c.json"), filepath.Join(dir, "c.svg")
	var out, errOut bytes.Buffer
	args := append([]string{"curve", "-servers", addr, "-server-pids", strconv.Itoa(os.Getpid()),
		"-axis", "znodes", "-steps", "100,0.3k", "-raw", raw, "-json", js, "-svg", svg}, quickCurve...)
	if err := benchMain(context.Background(), args, &out, &errOut); err != nil {
		t.Fatalf("%v\n%s%s", err, out.String(), errOut.String())
	}
	for _, want := range []string{"RESULT target=zoo axis=znodes point=300 rep=1 mode=ops op=cd", "server µs/op", "1.00×"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("standard output lacks %q:\n%s", want, out.String())
		}
	}
	if !strings.Contains(errOut.String(), "fill 100 → 300 znodes") || strings.Contains(errOut.String(), "no -server-pids") {
		t.Errorf("progress on standard error: %q", errOut.String())
	}
	b, err := os.ReadFile(raw)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := bench.ReadScale(bytes.NewReader(b))
	if err != nil || !strings.Contains(out.String(), string(b)) {
		t.Fatalf("raw file (%v) is not the lines printed:\n%s", err, b)
	}
	var rep bench.CurveReport
	if b, err = os.ReadFile(js); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Axis != "znodes" || len(rep.Windows) != 6 || len(rep.States) != 2 || len(rep.Lines) != len(recs) || !rep.Metered {
		t.Errorf("JSON report: axis %s, %d windows, %d states, %d lines (raw %d), metered %v",
			rep.Axis, len(rep.Windows), len(rep.States), len(rep.Lines), len(recs), rep.Metered)
	}
	if b, err = os.ReadFile(svg); err != nil || !strings.Contains(string(b), "Server RSS against znodes") {
		t.Errorf("-svg: %v", err)
	}
	var plot bytes.Buffer
	if err := benchMain(context.Background(), []string{"plot", raw}, &plot, io.Discard); err != nil ||
		!strings.Contains(plot.String(), "zoo setData") {
		t.Errorf("zoo bench plot of the raw file: %v", err)
	}
}

// Without server pids the curve says it measures latency only, and its
// lines carry no CPU figure for the plot to mistake for one.
func TestBenchCurveWithoutPIDs(t *testing.T) {
	addr := startBenchServer(t)
	var out, errOut bytes.Buffer
	args := append([]string{"curve", "-servers", addr, "-axis", "sessions", "-steps", "5", "-tree", "100",
		"-settle", "10ms", "-idle-window", "100ms", "-rate", "300", "-name", "mine"}, quickCurve...)
	if err := benchMain(context.Background(), args, &out, &errOut); err != nil {
		t.Fatalf("%v\n%s%s", err, out.String(), errOut.String())
	}
	if !strings.Contains(errOut.String(), "no -server-pids: reporting latency and throughput only") ||
		!strings.Contains(out.String(), "no -server-pids") {
		t.Errorf("no note of the missing pids:\n%s\n%s", out.String(), errOut.String())
	}
	if strings.Contains(out.String(), "srv_us_per_op") || !strings.Contains(out.String(), "target=mine axis=sessions point=5 rep=1 mode=ops op=get-sessions") {
		t.Errorf("lines:\n%s", out.String())
	}
}

func TestBenchCurveBadArguments(t *testing.T) {
	for _, args := range [][]string{
		{"curve", "-steps", "10,x"},
		{"curve", "-steps", "1.5"},
		{"curve", "-axis", "leaves", "-steps", "10", "-servers", "127.0.0.1:1"},
		{"curve", "extra"},
	} {
		if err := benchMain(context.Background(), args, io.Discard, io.Discard); err == nil {
			t.Errorf("%v: no error", args)
		}
	}
	got, err := parseSteps("10000, 100k,1e6,2M")
	if want := []int{10000, 100000, 1000000, 2000000}; err != nil || len(got) != 4 || got[1] != want[1] || got[2] != want[2] || got[3] != want[3] {
		t.Errorf("parseSteps: %v, %v", got, err)
	}
}
