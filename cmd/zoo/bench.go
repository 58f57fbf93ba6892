package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/zoohq/zoo/internal/bench"
)

// benchUsage is the usage text of zoo bench.
const benchUsage = `usage: zoo bench <workload> [flags]

Runs the ZooKeeper paper's evaluation (section 5) against any ZooKeeper-
compatible servers, one session per client spread round-robin over -servers:

  mix            Table 1 / Figure 5: getData/setData of -size bytes on -keys
                 znodes, -outstanding calls pipelined per session; a list of
                 read ratios (-read-ratio 0,50,100) runs one window each
  create-delete  Table 2: per worker, sync create then async delete, -count times
  barrier        Table 3: -clients enter -barriers double barriers, then leave them
  fill           create -znodes znodes of -size bytes, pipelined
  curve          the cost curve: grow znodes, idle sessions or watches step by
                 step (-axis, -steps) and measure each step, as scale.sh does
  plot           redraw plots from -json reports or shared/bench/scale.sh output

common flags: -servers h:p,... -server-pids PID,... (server CPU per op from
/proc) -json FILE -svg FILE -root ZNODE -session-timeout D -quiet -bufread
A run with any failed call is reported as not valid and zoo bench exits 1.
Run 'zoo bench <workload> -h' for a workload's flags.
`

// benchFlags are the flags every workload takes.
type benchFlags struct {
	servers, pids, root, jsonPath, svgPath string
	cpuProfile                             string
	sessionTimeout                         time.Duration
	quiet, bufread                         bool
}

func (f *benchFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.servers, "servers", "127.0.0.1:2181", "comma-separated host:port list; session i goes to server i mod N")
	fs.StringVar(&f.pids, "server-pids", "", "comma-separated PIDs of the servers, to report their CPU per operation")
	fs.StringVar(&f.root, "root", "/zoo-bench", "znode under which the workloads work")
	fs.StringVar(&f.jsonPath, "json", "", "write the results as JSON to this file")
	fs.StringVar(&f.svgPath, "svg", "", "write plots (throughput against read ratio, latency CDF) as SVG to this file")
	fs.DurationVar(&f.sessionTimeout, "session-timeout", 15*time.Second, "session timeout")
	fs.BoolVar(&f.quiet, "quiet", false, "no progress line on standard error")
	// On a shared machine the load generator's own cost per op is part of
	// every throughput figure: this shows where it goes.
	fs.StringVar(&f.cpuProfile, "cpuprofile", "", "write zoo bench's own CPU profile to this file")
	fs.BoolVar(&f.bufread, "bufread", true, "read each socket through a 64 KiB buffer (fewer read syscalls per reply; as shared/bench's zkload)")
}

func (f *benchFlags) target(stderr io.Writer) (bench.Target, error) {
	pids, err := bench.ParsePIDs(f.pids)
	if err != nil {
		return bench.Target{}, err
	}
	t := bench.Target{Root: f.root, SessionTimeout: f.sessionTimeout, ServerPIDs: pids, BufferedReads: f.bufread}
	for _, s := range strings.Split(f.servers, ",") {
		if s = strings.TrimSpace(s); s != "" {
			t.Servers = append(t.Servers, s)
		}
	}
	if !f.quiet {
		t.Progress = stderr
	}
	return t, nil
}

func runBench(args []string) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	return benchMain(ctx, args, os.Stdout, os.Stderr)
}

// errInvalidRun is returned when a run counted errors: its figures are
// printed but must not be used.
var errInvalidRun = errors.New("a run had errors: its figures are not a valid result")

func benchMain(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "help" || args[0] == "--help" {
		fmt.Fprint(stderr, benchUsage)
		return errors.New("no workload given")
	}
	if args[0] == "plot" {
		return benchPlot(args[1:], stdout, stderr)
	}
	if args[0] == "curve" {
		return benchCurve(ctx, args[1:], stdout, stderr)
	}
	var bf benchFlags
	fs := flag.NewFlagSet("zoo bench "+args[0], flag.ContinueOnError)
	fs.SetOutput(stderr)
	bf.register(fs)
	run, err := benchWorkload(args[0], fs)
	if err != nil {
		fmt.Fprint(stderr, benchUsage)
		return err
	}
	if err := fs.Parse(args[1:]); errors.Is(err, flag.ErrHelp) {
		return nil
	} else if err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	t, err := bf.target(stderr)
	if err != nil {
		return err
	}
	if bf.cpuProfile != "" {
		stopProfile, err := startCPUProfile(bf.cpuProfile)
		if err != nil {
			return err
		}
		defer stopProfile()
	}
	results, err := run(ctx, t)
	for _, r := range results {
		if werr := r.WriteText(stdout); werr != nil {
			return werr
		}
	}
	if err != nil {
		return err
	}
	if bf.jsonPath != "" {
		if err := bench.WriteJSON(bf.jsonPath, bench.Report{Tool: "zoo bench " + Version, Results: results}); err != nil {
			return err
		}
	}
	if bf.svgPath != "" {
		if err := writeSVGFile(bf.svgPath, results); err != nil {
			return err
		}
	}
	for _, r := range results {
		if !r.Valid {
			return errInvalidRun
		}
	}
	return nil
}

type workloadFunc func(context.Context, bench.Target) ([]*bench.Result, error)

// benchWorkload registers the workload's flags and returns how to run it.
func benchWorkload(name string, fs *flag.FlagSet) (workloadFunc, error) {
	one := func(r *bench.Result, err error) ([]*bench.Result, error) {
		if err != nil {
			return nil, err
		}
		return []*bench.Result{r}, nil
	}
	switch name {
	case "mix":
		var o bench.MixOptions
		fs.IntVar(&o.Clients, "clients", 10, "client sessions")
		fs.IntVar(&o.Outstanding, "outstanding", 100, "calls kept in flight per session")
		ratios := fs.String("read-ratio", "1.0", "fraction of calls that are reads, 0..1 (values above 1 are percent); a comma-separated list runs each in turn")
		fs.IntVar(&o.Size, "size", 1024, "bytes per znode and per setData")
		fs.IntVar(&o.Keys, "keys", 1000, "znodes the calls are spread over")
		fs.DurationVar(&o.Duration, "duration", 10*time.Second, "measured window")
		fs.DurationVar(&o.Warmup, "warmup", 3*time.Second, "unmeasured warm-up before each window")
		seed := fs.Uint64("seed", uint64(time.Now().UnixNano()), "seed of the random keys and read/write choices")
		return func(ctx context.Context, t bench.Target) ([]*bench.Result, error) {
			pcts, err := parseReadRatios(*ratios)
			if err != nil {
				return nil, err
			}
			o.Seed = *seed
			var rs []*bench.Result
			for _, p := range pcts {
				o.ReadPercent = p
				r, err := bench.Mix(ctx, t, o)
				if err != nil {
					return rs, err
				}
				rs = append(rs, r)
			}
			return rs, nil
		}, nil
	case "create-delete":
		var o bench.CreateDeleteOptions
		fs.IntVar(&o.Workers, "workers", 1, "workers, one session each")
		fs.IntVar(&o.Count, "count", 2000, "creates per worker (the paper used 50,000)")
		fs.IntVar(&o.Size, "size", 1024, "bytes per created znode")
		return func(ctx context.Context, t bench.Target) ([]*bench.Result, error) {
			return one(bench.CreateDelete(ctx, t, o))
		}, nil
	case "barrier":
		var o bench.BarrierOptions
		fs.IntVar(&o.Clients, "clients", 50, "clients, one session each")
		fs.IntVar(&o.Barriers, "barriers", 200, "barriers entered, then left, in succession")
		fs.DurationVar(&o.WaitTimeout, "wait-timeout", 60*time.Second, "fail a barrier wait that takes longer")
		return func(ctx context.Context, t bench.Target) ([]*bench.Result, error) {
			return one(bench.Barrier(ctx, t, o))
		}, nil
	case "fill":
		var o bench.FillOptions
		fs.IntVar(&o.Znodes, "znodes", 100000, "znodes to create")
		fs.IntVar(&o.Size, "size", 100, "bytes of data per znode")
		fs.IntVar(&o.Clients, "clients", 4, "sessions")
		fs.IntVar(&o.Outstanding, "outstanding", 200, "creates in flight per session")
		fs.IntVar(&o.Fanout, "fanout", 1000, "children per parent znode")
		return func(ctx context.Context, t bench.Target) ([]*bench.Result, error) {
			return one(bench.Fill(ctx, t, o))
		}, nil
	}
	return nil, fmt.Errorf("unknown workload %q", name)
}

// parseReadRatios reads "0,0.5,1" or "0,50,100": as in shared/bench's
// zkload, a value up to 1 is a fraction and one above 1 a percentage.
func parseReadRatios(s string) ([]float64, error) {
	var pcts []float64
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || v < 0 || v > 100 {
			return nil, fmt.Errorf("bad -read-ratio %q: want 0..1 or a percentage up to 100", f)
		}
		if v <= 1 {
			v *= 100
		}
		pcts = append(pcts, v)
	}
	return pcts, nil
}

func writeSVGFile(path string, results []*bench.Result) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := bench.WriteSVG(f, bench.ThroughputChart(results), bench.LatencyCDFChart(results)); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
