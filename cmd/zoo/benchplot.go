package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"

	"github.com/zoohq/zoo/internal/bench"
)

const benchPlotUsage = `usage: zoo bench plot [-o FILE.svg] [-png FILE.png] [-axis A] INPUT...

Draws plots from earlier runs. An INPUT ending in .json is a zoo bench -json
report (throughput against read ratio, latency CDF); any other is the raw
output of shared/bench's scale.sh (RESULT lines: the cost curve, server CPU
per operation, p99 latency and RSS against znodes, sessions or watches, each
server's line the median of its repetitions).
`

// benchPlot is zoo bench plot.
func benchPlot(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("zoo bench plot", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, benchPlotUsage); fs.PrintDefaults() }
	out := fs.String("o", "", "write the SVG to this file (default: standard output)")
	png := fs.String("png", "", "also write a PNG to this file (needs rsvg-convert, Debian's librsvg2-bin)")
	axis := fs.String("axis", "", "scale.sh axis to draw: znodes, sessions or watches (default: every axis in the input)")
	if err := fs.Parse(args); errors.Is(err, flag.ErrHelp) {
		return nil
	} else if err != nil {
		return err
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return errors.New("no input given")
	}
	charts, err := plotCharts(fs.Args(), *axis)
	if err != nil {
		return err
	}
	var svg bytes.Buffer
	if err := bench.WriteSVG(&svg, charts...); err != nil {
		return err
	}
	if *out == "" {
		_, err = stdout.Write(svg.Bytes())
	} else {
		err = os.WriteFile(*out, svg.Bytes(), 0o644)
	}
	if err != nil {
		return err
	}
	if *png != "" {
		return svgToPNG(svg.Bytes(), *png)
	}
	return nil
}

// plotCharts reads every input and returns its charts, in input order.
func plotCharts(paths []string, axis string) ([]*bench.Chart, error) {
	var charts []*bench.Chart
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		if strings.HasSuffix(p, ".json") {
			var rep bench.Report
			if err := json.Unmarshal(data, &rep); err != nil {
				return nil, fmt.Errorf("%s: %w", p, err)
			}
			charts = append(charts, bench.ThroughputChart(rep.Results), bench.LatencyCDFChart(rep.Results))
			continue
		}
		recs, err := bench.ReadScale(bytes.NewReader(data))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		axes := bench.Axes(recs)
		if axis != "" {
			axes = []string{axis}
		}
		n := len(charts)
		for _, a := range axes {
			charts = append(charts, bench.ScaleCharts(recs, a)...)
		}
		if len(charts) == n {
			return nil, fmt.Errorf("%s: no measurements on axis %q", p, axis)
		}
	}
	return charts, nil
}

// svgToPNG renders svg with rsvg-convert: drawing text and anti-aliased
// lines into pixels is a renderer's job, not this tool's.
func svgToPNG(svg []byte, path string) error {
	bin, err := exec.LookPath("rsvg-convert")
	if err != nil {
		return fmt.Errorf("-png needs rsvg-convert (Debian package librsvg2-bin): %w", err)
	}
	cmd := exec.Command(bin, "-b", "white", "-o", path)
	cmd.Stdin = bytes.NewReader(svg)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("rsvg-convert: %w: %s", err, bytes.TrimSpace(out))
	}
	return nil
}
