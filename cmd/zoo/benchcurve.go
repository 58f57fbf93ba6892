package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/zoohq/zoo/internal/bench"
)

const benchCurveUsage = `usage: zoo bench curve -axis znodes|sessions|watches -steps N,N,... [flags]

The cost curve: grows the target's state step by step along one axis
(znodes: a fill tree of 100 B znodes, 1000 per parent; sessions: idle
sessions held open over a 10k-znode tree, or with -detached opened and
their connections dropped, which the server keeps until they time out;
watches: getData watches on distinct znodes of a tree, over 300
sessions) and at each step runs -reps timed windows of getData, setData
and create+delete (watches: setData on unwatched znodes and setData
firing one watch each; sessions: getData paced to -rate), as
shared/bench's scale.sh does. With -server-pids it reports server CPU
per operation and RSS from /proc; without, latency only.

Standard output gets scale.sh's RESULT lines as they are made, then a
table; 'zoo bench plot' draws a saved copy of it. Progress goes to
standard error. The curve works under <root>/curve and removes it at
the end (unless -keep).
`

// benchCurve is zoo bench curve.
func benchCurve(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var bf benchFlags
	var o bench.CurveOptions
	fs := flag.NewFlagSet("zoo bench curve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, benchCurveUsage); fs.PrintDefaults() }
	bf.register(fs)
	fs.StringVar(&o.Axis, "axis", "znodes", "what grows: znodes, sessions or watches")
	steps := fs.String("steps", "10000,100000,1000000", "comma-separated, ascending state sizes (1e6 and 10k forms are read too)")
	fs.IntVar(&o.Reps, "reps", 2, "windows of each operation at each step (the table gives medians and ranges)")
	fs.DurationVar(&o.Duration, "duration", 10*time.Second, "measured window")
	fs.DurationVar(&o.Warmup, "warmup", 3*time.Second, "unmeasured warm-up before each window")
	fs.DurationVar(&o.PreWarm, "prewarm", 5*time.Second, "znodes axis: unrecorded getData before a step's windows (negative: none)")
	fs.IntVar(&o.Clients, "clients", 8, "load sessions")
	fs.IntVar(&o.Outstanding, "outstanding", 32, "requests in flight per load session")
	fs.IntVar(&o.Size, "size", 100, "bytes per znode and per setData")
	fs.IntVar(&o.Fanout, "fanout", 1000, "children per parent znode of the tree")
	fs.IntVar(&o.Tree, "tree", 0, "znodes of the tree under the watches axis (default largest step + 100000) and the sessions axis (default 10000)")
	fs.IntVar(&o.WatchSessions, "watch-sessions", 300, "watches axis: sessions that hold the watches")
	fs.Float64Var(&o.Rate, "rate", 2000, "sessions axis: getData per second of the paced load")
	fs.DurationVar(&o.IdleTimeout, "idle-timeout", 0, "sessions axis: the idle sessions' timeout (default 10s, 10m with -detached)")
	fs.BoolVar(&o.Detached, "detached", false, "sessions axis: open each session and drop its connection, so that the steps can pass the open-file limit (the server's maxSessionTimeout must allow -idle-timeout)")
	fs.DurationVar(&o.Settle, "settle", 5*time.Second, "sessions axis: wait after the sessions are up")
	fs.DurationVar(&o.IdleWindow, "idle-window", 15*time.Second, "sessions axis: window of the idle CPU measure")
	fs.StringVar(&o.Name, "name", "", "the target's name in the RESULT lines (default zoo or apache, from srvr)")
	fs.BoolVar(&o.Keep, "keep", false, "leave the curve's znodes")
	raw := fs.String("raw", "", "also write the RESULT lines to this file")
	png := fs.String("png", "", "also draw the plots as PNG to this file (needs rsvg-convert)")
	seed := fs.Uint64("seed", uint64(time.Now().UnixNano()), "seed of the random znode choices")
	if err := fs.Parse(args); errors.Is(err, flag.ErrHelp) {
		return nil
	} else if err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	var err error
	if o.Steps, err = parseSteps(*steps); err != nil {
		return err
	}
	o.Seed = *seed
	t, err := bf.target(stderr)
	if err != nil {
		return err
	}
	if len(t.ServerPIDs) == 0 {
		fmt.Fprintln(stderr, "zoo bench curve: no -server-pids: reporting latency and throughput only (no server CPU per op, no RSS)")
	}
	if o.Axis == "sessions" && !o.Detached {
		raiseNoFile(o.Steps[len(o.Steps)-1]+o.Clients+100, stderr)
	}
	var lines bytes.Buffer
	o.Lines = io.MultiWriter(stdout, &lines)
	if bf.cpuProfile != "" {
		stopProfile, err := startCPUProfile(bf.cpuProfile)
		if err != nil {
			return err
		}
		defer stopProfile()
	}
	rep, err := bench.Curve(ctx, t, o)
	if rep != nil {
		if werr := writeCurve(rep, &bf, *raw, *png, &lines, stdout); werr != nil {
			err = errors.Join(err, werr)
		}
	}
	if err != nil {
		return err
	}
	if !rep.Valid() {
		return errInvalidRun
	}
	return nil
}

// writeCurve prints the table and writes the files asked for.
func writeCurve(rep *bench.CurveReport, bf *benchFlags, raw, png string, lines *bytes.Buffer, stdout io.Writer) error {
	rep.Tool = "zoo bench " + Version
	if err := rep.WriteTable(stdout); err != nil {
		return err
	}
	if raw != "" {
		if err := os.WriteFile(raw, lines.Bytes(), 0o644); err != nil {
			return err
		}
	}
	if bf.jsonPath != "" {
		if err := bench.WriteCurveJSON(bf.jsonPath, rep); err != nil {
			return err
		}
	}
	if bf.svgPath == "" && png == "" {
		return nil
	}
	recs, err := bench.ReadScale(bytes.NewReader(lines.Bytes()))
	if err != nil {
		return err
	}
	var svg bytes.Buffer
	if err := bench.WriteSVG(&svg, bench.ScaleCharts(recs, rep.Axis)...); err != nil {
		return err
	}
	if bf.svgPath != "" {
		if err := os.WriteFile(bf.svgPath, svg.Bytes(), 0o644); err != nil {
			return err
		}
	}
	if png != "" {
		return svgToPNG(svg.Bytes(), png)
	}
	return nil
}

// parseSteps reads "10000,100k,1e6".
func parseSteps(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		f = strings.ToLower(strings.TrimSpace(f))
		mult := 1.0
		switch {
		case strings.HasSuffix(f, "k"):
			f, mult = strings.TrimSuffix(f, "k"), 1e3
		case strings.HasSuffix(f, "m"):
			f, mult = strings.TrimSuffix(f, "m"), 1e6
		}
		v, err := strconv.ParseFloat(f, 64)
		if err != nil || v < 0 || v*mult > 1e9 || v*mult != float64(int(v*mult)) {
			return nil, fmt.Errorf("bad -steps value %q: want a whole number such as 10000, 100k or 1e6", f)
		}
		out = append(out, int(v*mult))
	}
	return out, nil
}

// raiseNoFile lifts the soft limit on open files towards need (a
// session is a descriptor), up to the hard limit, and says when even
// that is too low.
func raiseNoFile(need int, stderr io.Writer) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return
	}
	if lim.Cur < uint64(need) && lim.Cur < lim.Max {
		lim.Cur = min(lim.Max, uint64(need))
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
			fmt.Fprintf(stderr, "zoo bench curve: raising the open-file limit: %v\n", err)
		}
	}
	if lim.Cur < uint64(need) {
		fmt.Fprintf(stderr, "zoo bench curve: the open-file limit (%d) is below the %d the largest step needs; its sessions will fail\n", lim.Cur, need)
	}
}
