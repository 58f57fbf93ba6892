package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
)

// WriteTable prints the curve for a person: per step and operation, the
// median over repetitions of server CPU per op [min–max], its ratio to
// the first step (the "within ±20%"), throughput and p50/p99;
// then the state at each step.
func (r *CurveReport) WriteTable(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "cost curve: %s, axis %s, steps %v, %d repetitions, servers %s\n",
		r.Target, r.Axis, r.Steps, r.Reps, strings.Join(r.Servers, ","))
	if !r.Metered {
		b.WriteString("no -server-pids: latency and throughput only (no server CPU per op, no RSS)\n")
	}
	fmt.Fprintf(&b, "%-12s %-14s %-26s %-9s %-10s %-9s %-9s\n", r.Axis, "op", "server µs/op [min–max]", "vs first", "ops/s", "p50 ms", "p99 ms")
	var ops []string
	for _, w := range r.Windows {
		if !slices.Contains(ops, w.Op) {
			ops = append(ops, w.Op)
		}
	}
	for _, op := range ops {
		first := -1.0
		for _, p := range r.Steps {
			var us, opsPerS, p50, p99 []float64
			valid := true
			for _, w := range r.Windows {
				if w.Op != op || w.Point != p {
					continue
				}
				valid = valid && w.Result.Valid
				if w.Result.CPU != nil {
					us = append(us, w.Result.CPU.ServerPerOpMicros)
				}
				opsPerS = append(opsPerS, w.Result.OpsPerSec)
				p50 = append(p50, w.Result.Latency.P50Ms)
				p99 = append(p99, w.Result.Latency.P99Ms)
			}
			if len(opsPerS) == 0 {
				continue
			}
			cpu, vs := "–", "–"
			if len(us) > 0 {
				m := median(us)
				cpu = fmt.Sprintf("%.1f [%.1f–%.1f]", m, slices.Min(us), slices.Max(us))
				if first < 0 {
					first = m
				}
				if first > 0 {
					vs = fmt.Sprintf("%.2f×", m/first)
				}
			}
			note := ""
			if !valid {
				note = "  NOT VALID (errors)"
			}
			fmt.Fprintf(&b, "%-12d %-14s %-26s %-9s %-10.0f %-9.3f %-9.3f%s\n", p, op, cpu, vs, median(opsPerS), median(p50), median(p99), note)
		}
	}
	b.WriteString("\nstate at each step (-1: not readable; counts need mntr in 4lw.commands.whitelist):\n")
	fmt.Fprintf(&b, "%-12s %-10s %-12s %-12s %-12s %-12s %-10s %s\n", r.Axis, "RSS MiB", "znodes", "watches", "connections", "sessions", "grow s", "added")
	for _, s := range r.States {
		rss := "–"
		if s.RSSKB >= 0 {
			rss = fmt.Sprintf("%.1f", float64(s.RSSKB)/1024)
		}
		fmt.Fprintf(&b, "%-12d %-10s %-12d %-12d %-12d %-12d %-10.2f %d", s.Point, rss, s.Znodes, s.Watches, s.Connections, s.Sessions, s.GrowS, s.Added)
		if s.IdleCPUMsPerS > 0 {
			fmt.Fprintf(&b, "  idle server CPU %.1f ms/s", s.IdleCPUMsPerS)
		}
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteCurveJSON writes the report to path, replacing it whole.
func WriteCurveJSON(path string, rep *CurveReport) error {
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	return writeFileAtomic(path, append(b, '\n'))
}
