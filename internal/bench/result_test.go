package bench

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestResultTextAndJSON(t *testing.T) {
	r := mixResult(3, 50, 1234)
	r.Reads, r.Writes, r.Ops, r.WindowS, r.Valid = 600, 634, 1234, 1, true
	r.CPU = &CPU{ServerCores: 0.5, ServerSeconds: 0.5, ServerPerOpMicros: 405.2}
	var b strings.Builder
	if err := r.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	text := b.String()
	for _, want := range []string{"mix: servers=3 clients=2 outstanding=3 read=50%", "1234 ops/s (reads 600/s, writes 634/s)",
		"p50=", "p90=", "p99=", "p999=", "max=", "405.2 µs per op", "errors: 0 (valid)"} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}

	bad := &Result{Workload: "fill", Errors: 2, ErrorSamples: []string{"x2 create: node exists"}}
	b.Reset()
	if err := bad.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "ERRORS: 2 (not a valid result)") || !strings.Contains(b.String(), "node exists") {
		t.Errorf("invalid result printed as:\n%s", b.String())
	}

	path := filepath.Join(t.TempDir(), "out.json")
	if err := WriteJSON(path, Report{Tool: "zoo bench", Results: []*Result{r, bad}}); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	if len(back.Results) != 2 || back.Results[0].OpsPerSec != 1234 || back.Results[0].Latency.P99Ms != r.Latency.P99Ms ||
		back.Results[0].CPU.ServerPerOpMicros != 405.2 || back.Results[1].Valid || len(back.Results[0].Latency.CDF) == 0 {
		t.Errorf("JSON round trip lost figures: %s", raw)
	}
	if _, err := os.Stat(path + ".tmp"); !os.IsNotExist(err) {
		t.Errorf("temporary file left: %v", err)
	}
}
