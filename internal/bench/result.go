package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// Latency summarises a histogram: the percentiles the paper and
// shared/bench report, and the whole distribution for plots.
type Latency struct {
	Count  int64      `json:"count"`
	MeanMs float64    `json:"mean_ms"`
	P50Ms  float64    `json:"p50_ms"`
	P90Ms  float64    `json:"p90_ms"`
	P99Ms  float64    `json:"p99_ms"`
	P999Ms float64    `json:"p999_ms"`
	MaxMs  float64    `json:"max_ms"`
	CDF    []CDFPoint `json:"cdf,omitempty"`
}

func summarize(h *Hist) Latency {
	return Latency{
		Count: h.Count(), MeanMs: ms(h.Mean()),
		P50Ms: ms(h.Quantile(0.5)), P90Ms: ms(h.Quantile(0.9)), P99Ms: ms(h.Quantile(0.99)),
		P999Ms: ms(h.Quantile(0.999)), MaxMs: ms(h.Max()), CDF: h.CDF(),
	}
}

// Result is one run of one workload. Ops counts the measured operations
// and OpsPerSec is Ops over WindowS. For mix Ops = Reads + Writes, for
// create-delete and fill Ops = Creates, and the latency histogram holds
// one value per op. For barrier Ops = ZKOps, every call of the recipe,
// and the histogram holds one value per client: the time it took.
type Result struct {
	Workload string    `json:"workload"`
	Start    time.Time `json:"start"`
	Servers  []string  `json:"servers"`

	// The parameters that apply to the workload.
	Clients     int     `json:"clients,omitempty"`
	Outstanding int     `json:"outstanding,omitempty"`
	ReadPercent float64 `json:"read_percent"`
	Size        int     `json:"size,omitempty"`
	Keys        int     `json:"keys,omitempty"`
	Workers     int     `json:"workers,omitempty"`
	Count       int     `json:"count,omitempty"`
	Barriers    int     `json:"barriers,omitempty"`
	Znodes      int     `json:"znodes,omitempty"`

	// WindowS is the measured time: the window after warm-up (mix), or
	// from the first request to the last worker's end.
	WindowS   float64 `json:"window_s"`
	Ops       int64   `json:"ops"`
	OpsPerSec float64 `json:"ops_per_s"`
	Reads     int64   `json:"reads,omitempty"`
	Writes    int64   `json:"writes,omitempty"`
	Creates   int64   `json:"creates,omitempty"`
	Deletes   int64   `json:"deletes,omitempty"`
	// Barrier: the paper's measure, the mean over clients of the time
	// each took to enter and leave all barriers, and the slowest; ZKOps
	// counts every ZooKeeper call the recipe made.
	BarrierMeanS float64 `json:"barrier_mean_s,omitempty"`
	BarrierMaxS  float64 `json:"barrier_max_s,omitempty"`
	ZKOps        int64   `json:"zk_ops,omitempty"`
	// InFlight is Little's law, throughput x mean latency: for mix it
	// shows how many requests were really pipelined.
	InFlight float64 `json:"in_flight,omitempty"`

	Latency Latency `json:"latency"`
	CPU     *CPU    `json:"cpu,omitempty"`

	// Errors counts failed calls, lost connections and failed checks; a
	// result with errors is not valid.
	Errors       int64    `json:"errors"`
	ErrorSamples []string `json:"error_samples,omitempty"`
	Valid        bool     `json:"valid"`
}

// WriteText prints the result for a person, one figure per line group.
func (r *Result) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: servers=%d", r.Workload, len(r.Servers))
	switch r.Workload {
	case "mix":
		fmt.Fprintf(&b, " clients=%d outstanding=%d read=%.0f%% size=%d keys=%d window=%.1fs\n",
			r.Clients, r.Outstanding, r.ReadPercent, r.Size, r.Keys, r.WindowS)
		fmt.Fprintf(&b, "  throughput: %.0f ops/s (reads %.0f/s, writes %.0f/s)\n", r.OpsPerSec,
			float64(r.Reads)/r.WindowS, float64(r.Writes)/r.WindowS)
		fmt.Fprintf(&b, "  in flight (throughput x mean latency): %.0f of %d issued\n", r.InFlight, r.Clients*r.Outstanding)
	case "create-delete":
		fmt.Fprintf(&b, " workers=%d count=%d size=%d elapsed=%.2fs\n", r.Workers, r.Count, r.Size, r.WindowS)
		fmt.Fprintf(&b, "  throughput: %.0f creates/s (%d creates, %d deletes)\n", r.OpsPerSec, r.Creates, r.Deletes)
	case "barrier":
		fmt.Fprintf(&b, " clients=%d barriers=%d\n", r.Clients, r.Barriers)
		fmt.Fprintf(&b, "  time per client: mean=%.3fs max=%.3fs; %d zookeeper calls, %.0f/s\n",
			r.BarrierMeanS, r.BarrierMaxS, r.ZKOps, r.OpsPerSec)
	case "fill":
		fmt.Fprintf(&b, " znodes=%d size=%d clients=%d outstanding=%d\n", r.Znodes, r.Size, r.Clients, r.Outstanding)
		fmt.Fprintf(&b, "  throughput: %.0f creates/s (%d in %.1fs)\n", r.OpsPerSec, r.Creates, r.WindowS)
	default:
		b.WriteString("\n")
	}
	l := r.Latency
	fmt.Fprintf(&b, "  latency ms (%d): mean=%.3f p50=%.3f p90=%.3f p99=%.3f p999=%.3f max=%.3f\n",
		l.Count, l.MeanMs, l.P50Ms, l.P90Ms, l.P99Ms, l.P999Ms, l.MaxMs)
	if c := r.CPU; c != nil {
		fmt.Fprintf(&b, "  server cpu: %.2f cores, %.1f µs per op; client %.2f cores\n",
			c.ServerCores, c.ServerPerOpMicros, c.ClientCores)
	}
	if r.Valid {
		b.WriteString("  errors: 0 (valid)\n")
	} else {
		fmt.Fprintf(&b, "  ERRORS: %d (not a valid result)\n", r.Errors)
		for _, s := range r.ErrorSamples {
			fmt.Fprintf(&b, "    %s\n", s)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Report is what -json writes: every result of one invocation.
type Report struct {
	Tool    string    `json:"tool"`
	Results []*Result `json:"results"`
}

// WriteJSON writes the report to path, replacing it whole: a reader
// never sees half a file.
func WriteJSON(path string, rep Report) error {
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	return writeFileAtomic(path, append(b, '\n'))
}

func writeFileAtomic(path string, data []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}
