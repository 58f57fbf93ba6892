package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/zoohq/zoo/zk"
)

// The cost curve (issue 14): how a server's cost per operation grows with
// its state. Along one axis (znodes, idle sessions or watches) the state
// is grown step by step, and at each step timed windows of getData,
// setData and create+delete measure server CPU per operation, p50/p99
// latency and RSS. The method is shared/bench's scale.sh, with its zkload
// loads, and the output is the same RESULT lines, so `zoo bench plot`
// and scale_report.py read either. Two differences, both because zoo
// bench measures a target it did not start: the state grows in place
// (scale.sh restarts the server for each znodes point and loads a new
// set of watches for each watches point), and there is no restart
// measure.

// CurveOptions selects an axis, its steps and the load.
type CurveOptions struct {
	Axis  string // znodes, sessions or watches
	Steps []int  // ascending state sizes
	Reps  int    // windows of each op at each step; default 2
	// Name is the target's name in the RESULT lines; by default "zoo"
	// or "apache", from the server's srvr, else "target".
	Name                 string
	Duration, Warmup     time.Duration // of each window; default 10 s, 3 s
	Clients, Outstanding int           // load sessions x requests in flight; default 8 x 32
	Size, Fanout         int           // znode data, children per parent; default 100, 1000
	// PreWarm is an unrecorded getData load before a znodes step's
	// windows (the JVM's JIT, caches); default 5 s, negative none.
	PreWarm time.Duration
	// Tree is the fill under the watches axis (default the largest step
	// + 100,000: setData on unwatched znodes needs some) and the
	// sessions axis (default 10,000).
	Tree int
	// WatchSessions hold the watches, watch i on session i mod N;
	// default 300.
	WatchSessions int
	// Sessions axis: the idle sessions' timeout (default 10 s), the
	// wait before their idle CPU is measured (5 s) over IdleWindow
	// (15 s), then a getData load paced to Rate per second (2,000).
	IdleTimeout        time.Duration
	Settle, IdleWindow time.Duration
	Rate               float64
	// Detached: the sessions axis opens its sessions and drops their
	// connections (detached.go), to go past the open-file limit. The
	// timeout (IdleTimeout, default 10 minutes then) must outlast the
	// curve, and the server's maxSessionTimeout allow it.
	Detached bool
	Keep     bool      // leave the znodes created
	Lines    io.Writer // each RESULT line as it is made
	Seed     uint64
}

// ErrCurveExists: a curve's znodes are still there (an earlier -keep or
// an interrupted run); they would be counted as state.
var ErrCurveExists = errors.New("bench: the curve's znodes already exist")

func (o CurveOptions) withDefaults() (CurveOptions, error) {
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	defD := func(v *time.Duration, d time.Duration) {
		if *v == 0 {
			*v = d
		}
	}
	def(&o.Reps, 2)
	def(&o.Clients, 8)
	def(&o.Outstanding, 32)
	def(&o.Size, 100)
	def(&o.Fanout, 1000)
	def(&o.WatchSessions, 300)
	defD(&o.Duration, 10*time.Second)
	defD(&o.Warmup, 3*time.Second)
	defD(&o.PreWarm, 5*time.Second)
	if o.Detached {
		defD(&o.IdleTimeout, 10*time.Minute)
	}
	defD(&o.IdleTimeout, 10*time.Second)
	defD(&o.Settle, 5*time.Second)
	defD(&o.IdleWindow, 15*time.Second)
	if o.Rate == 0 {
		o.Rate = 2000
	}
	if len(o.Steps) == 0 {
		return o, fmt.Errorf("%w: no steps", ErrBadOptions)
	}
	for i := 1; i < len(o.Steps); i++ {
		if o.Steps[i] <= o.Steps[i-1] {
			return o, fmt.Errorf("%w: steps %v must ascend", ErrBadOptions, o.Steps)
		}
	}
	largest := o.Steps[len(o.Steps)-1]
	switch o.Axis {
	case "znodes":
		if o.Steps[0] < 1 {
			return o, fmt.Errorf("%w: a znodes step must be at least 1", ErrBadOptions)
		}
	case "sessions":
		def(&o.Tree, 10000)
	case "watches":
		def(&o.Tree, largest+100000)
		if largest >= o.Tree {
			return o, fmt.Errorf("%w: %d watches need a tree of more znodes than %d", ErrBadOptions, largest, o.Tree)
		}
	default:
		return o, fmt.Errorf("%w: axis %q: want znodes, sessions or watches", ErrBadOptions, o.Axis)
	}
	if o.Detached && o.Axis != "sessions" {
		return o, fmt.Errorf("%w: detached sessions belong to the sessions axis, not %s", ErrBadOptions, o.Axis)
	}
	if o.Steps[0] < 0 || o.Reps < 1 || o.Clients < 1 || o.Outstanding < 1 || o.Size < 0 || o.Fanout < 1 ||
		o.WatchSessions < 1 || o.Rate < 0 || o.Duration < 0 || o.Warmup < 0 {
		return o, fmt.Errorf("%w: steps, reps, clients, outstanding, fanout, sessions and times must be positive", ErrBadOptions)
	}
	return o, nil
}

// CurveReport is a curve's figures: every window, the state at every
// step, and the RESULT lines they were written as.
type CurveReport struct {
	Tool    string   `json:"tool"`
	Target  string   `json:"target"`
	Axis    string   `json:"axis"`
	Servers []string `json:"servers"`
	// Metered: server pids were given, so there is server CPU per op
	// and RSS; without them only latency and throughput.
	Metered bool          `json:"metered"`
	Steps   []int         `json:"steps"`
	Reps    int           `json:"reps"`
	Grow    []*Result     `json:"grow"` // the fills (znodes: one per step)
	Windows []CurveWindow `json:"windows"`
	States  []CurveState  `json:"states"`
	Lines   []string      `json:"result_lines"`
}

// CurveWindow is one timed window: Op is get, set or cd, set-unwatched
// and set-watched (watches axis), get-sessions (sessions axis).
type CurveWindow struct {
	Point  int     `json:"point"`
	Rep    int     `json:"rep"`
	Op     string  `json:"op"`
	Result *Result `json:"result"`
}

// CurveState is the state at a step, as the servers report it; -1 is a
// figure that could not be read (RSS without pids, counts without mntr).
type CurveState struct {
	Point       int   `json:"point"`
	RSSKB       int64 `json:"rss_kb"`
	Znodes      int64 `json:"znode_count"`
	Watches     int64 `json:"watch_count"`
	Connections int64 `json:"alive_connections"`
	Sessions    int64 `json:"global_sessions"`
	// GrowS is the time it took to grow the state from the step before
	// (fill, connect, set watches), Added what it added.
	GrowS float64 `json:"grow_s"`
	Added int     `json:"added"`
	// IdleCPUMsPerS is the servers' CPU with only the idle sessions
	// (sessions axis, metered), in ms per second.
	IdleCPUMsPerS float64 `json:"idle_cpu_ms_per_s,omitempty"`
}

// Valid is whether every fill and window of the curve ran without error.
func (r *CurveReport) Valid() bool {
	for _, g := range r.Grow {
		if !g.Valid {
			return false
		}
	}
	for _, w := range r.Windows {
		if !w.Result.Valid {
			return false
		}
	}
	return true
}

// curve is one run.
type curve struct {
	t     Target // rooted at the curve's own znode
	o     CurveOptions
	rep   *CurveReport
	admin []session // setup, counts, clean-up
	held  errCount  // losses of sessions held across windows
	rng   *rand.Rand
}

// Curve runs the cost curve of o.Axis against t.
func Curve(ctx context.Context, t Target, o CurveOptions) (*CurveReport, error) {
	t, err := t.withDefaults()
	if err != nil {
		return nil, err
	}
	if o, err = o.withDefaults(); err != nil {
		return nil, err
	}
	c := &curve{o: o, rng: rand.New(rand.NewPCG(o.Seed, 1))}
	c.t = t
	c.t.Root = t.Root + "/curve"
	if c.admin, err = connectAll(ctx, t, 4, &c.held); err != nil {
		return nil, err
	}
	defer closeAll(c.admin)
	if ok, _, err := c.admin[0].Exists(ctx, c.t.Root); err != nil {
		return nil, err
	} else if ok {
		return nil, fmt.Errorf("%w: %s (delete it, or choose another -root)", ErrCurveExists, c.t.Root)
	}
	rootThere, _, err := c.admin[0].Exists(ctx, t.Root)
	if err != nil {
		return nil, err
	}
	if err := ensurePath(ctx, c.admin[0].Client, c.t.Root); err != nil {
		return nil, err
	}
	c.rep = &CurveReport{Target: o.Name, Axis: o.Axis, Servers: t.Servers, Metered: len(t.ServerPIDs) > 0,
		Steps: o.Steps, Reps: o.Reps}
	if c.rep.Target == "" {
		c.rep.Target = targetName(ctx, t.Servers[0])
	}
	c.env()
	var run func(context.Context) error
	switch o.Axis {
	case "znodes":
		run = c.znodes
	case "sessions":
		run = c.sessions
	case "watches":
		run = c.watches
	}
	err = run(ctx)
	if !o.Keep {
		c.logf("removing %s", c.t.Root)
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Minute)
		defer cancel()
		cerr := deleteTree(cctx, c.admin, c.t.Root)
		if !rootThere { // the root too, if the curve made it and nothing else is in it
			if derr := c.admin[0].Delete(cctx, t.Root, -1); derr != nil && !errors.Is(derr, zk.ErrNotEmpty) && !errors.Is(derr, zk.ErrNoNode) {
				cerr = errors.Join(cerr, derr)
			}
		}
		if cerr != nil {
			err = errors.Join(err, fmt.Errorf("clean-up: %w", cerr))
		}
	}
	return c.rep, err
}

// targetName tells Zoo from Apache by srvr's version line.
func targetName(ctx context.Context, addr string) string {
	out, err := fourLetter(ctx, addr, "srvr")
	switch {
	case err != nil || !strings.Contains(out, "Zookeeper version:"):
		return "target"
	case strings.Contains(out, "-zoo"):
		return "zoo"
	default:
		return "apache"
	}
}

func (c *curve) logf(format string, args ...any) {
	if c.t.Progress != nil {
		fmt.Fprintf(c.t.Progress, "[%s] curve %s: %s\n", time.Now().Format("15:04:05"), c.o.Axis, fmt.Sprintf(format, args...))
	}
}

// emit writes one RESULT line: the tag (target, axis, point, rep) and
// the fields, in order, as scale.sh writes them.
func (c *curve) emit(point string, rep int, kv ...any) {
	var b strings.Builder
	b.WriteString("RESULT")
	if point != "" {
		fmt.Fprintf(&b, " target=%s axis=%s point=%s rep=%d", c.rep.Target, c.o.Axis, point, rep)
	}
	for i := 0; i+1 < len(kv); i += 2 {
		fmt.Fprintf(&b, " %v=%v", kv[i], kv[i+1])
	}
	line := b.String()
	c.rep.Lines = append(c.rep.Lines, line)
	if c.o.Lines != nil {
		fmt.Fprintln(c.o.Lines, line)
	}
}

func (c *curve) env() {
	mem := int64(-1)
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		if kb, ok := statusField(b, "MemTotal"); ok {
			mem = (kb + 1<<19) >> 20
		}
	}
	c.emit("", 0, "mode", "env", "tool", "zoo-bench", "nservers", len(c.t.Servers), "date", time.Now().UTC().Format("2006-01-02T15:04Z"),
		"cand_name", c.rep.Target, "reps", c.o.Reps, "duration", c.o.Duration.Seconds(), "warmup", c.o.Warmup.Seconds(),
		"clients", c.o.Clients, "outstanding", c.o.Outstanding, "metered", c.rep.Metered,
		"nproc", runtime.NumCPU(), "mem_gib", mem)
}

// treeName is fill znode i (Fill's naming).
func (c *curve) treeName(i int) string {
	return fmt.Sprintf("%s/fill/d%05d/n%08d", c.t.Root, i/c.o.Fanout, i)
}

func (c *curve) treeParent(d int) string { return fmt.Sprintf("%s/fill/d%05d", c.t.Root, d) }

// grow fills the tree from znodes from to to.
func (c *curve) grow(ctx context.Context, point string, from, to int) (*Result, error) {
	c.logf("fill %d → %d znodes", from, to)
	r, err := Fill(ctx, c.t, FillOptions{Znodes: to, Start: from, Size: c.o.Size, Fanout: c.o.Fanout, Clients: 8, Outstanding: 128})
	if err != nil {
		return nil, err
	}
	c.rep.Grow = append(c.rep.Grow, r)
	kv := []any{"mode", "fill", "count", to, "size", c.o.Size, "created", r.Creates,
		"creates_per_s", fmt.Sprintf("%.0f", r.OpsPerSec), "elapsed_s", fmt.Sprintf("%.1f", r.WindowS)}
	kv = append(kv, cpuKV(r)...)
	c.emit(point, 1, append(kv, "errors", r.Errors, "valid", r.Valid)...)
	return r, nil
}

// window runs one timed window and writes its line; extra fields go
// between the op and the figures, as zkload's.
func (c *curve) window(ctx context.Context, point, rep int, op string, w opWindow, extra ...any) (*Result, error) {
	w.clients, w.outstanding, w.data, w.held = c.o.Clients, c.o.Outstanding, payload(c.o.Size, 'a'), &c.held
	w.seed = c.rng.Uint64()
	if w.warmup == 0 {
		w.warmup = c.o.Warmup
	}
	if w.duration == 0 {
		w.duration = c.o.Duration
	}
	r, err := runOpWindow(ctx, c.t, w)
	if err != nil {
		return nil, err
	}
	if w.after != nil {
		extra = append(extra, w.after(r)...)
	}
	c.rep.Windows = append(c.rep.Windows, CurveWindow{Point: point, Rep: rep, Op: op, Result: r})
	kv := append([]any{"mode", "ops", "op", op}, extra...)
	kv = append(kv, "clients", w.clients, "outstanding", w.outstanding, "rate", fmt.Sprintf("%.0f", w.rate),
		"n", r.Ops, "window_s", fmt.Sprintf("%.1f", r.WindowS), "ops_per_s", fmt.Sprintf("%.0f", r.OpsPerSec),
		"mean_ms", fmt.Sprintf("%.3f", r.Latency.MeanMs), "p50_ms", fmt.Sprintf("%.3f", r.Latency.P50Ms),
		"p99_ms", fmt.Sprintf("%.3f", r.Latency.P99Ms), "p999_ms", fmt.Sprintf("%.3f", r.Latency.P999Ms))
	kv = append(kv, cpuKV(r)...)
	kv = append(kv, "rss_kb", c.rss(), "errors", r.Errors, "valid", r.Valid)
	c.emit(fmt.Sprint(point), rep, kv...)
	return r, nil
}

// cpuKV is a result's server CPU fields; none when it was not metered.
func cpuKV(r *Result) []any {
	if r.CPU == nil {
		return nil
	}
	return []any{"srv_us_per_op", fmt.Sprintf("%.2f", r.CPU.ServerPerOpMicros),
		"cpu_client", fmt.Sprintf("%.2f", r.CPU.ClientCores), "cpu_server", fmt.Sprintf("%.2f", r.CPU.ServerCores)}
}

// rss is the servers' RSS in kB, or "na".
func (c *curve) rss() string {
	if kb, ok := memKB(c.t.ServerPIDs, "VmRSS"); ok {
		return fmt.Sprint(kb)
	}
	return "na"
}

// state reads the servers' state at a step: RSS, and mntr's counts from
// the first server.
func (c *curve) state(ctx context.Context, point int) CurveState {
	s := CurveState{Point: point, RSSKB: -1, Znodes: -1, Watches: -1, Connections: -1, Sessions: -1}
	if kb, ok := memKB(c.t.ServerPIDs, "VmRSS"); ok {
		s.RSSKB = kb
	}
	m, err := Mntr(ctx, c.t.Servers[0])
	if err != nil {
		c.logf("no counts from mntr: %v", err)
	}
	for key, p := range map[string]*int64{"zk_znode_count": &s.Znodes, "zk_watch_count": &s.Watches,
		"zk_num_alive_connections": &s.Connections, "zk_global_sessions": &s.Sessions} {
		if v, err := fmt.Sscan(m[key], p); v != 1 || err != nil {
			*p = -1
		}
	}
	return s
}

func na(v int64) string {
	if v < 0 {
		return "na"
	}
	return fmt.Sprint(v)
}

// reps runs the windows of each op, Reps times, in the order scale.sh
// runs them (get, set, cd within a repetition).
func (c *curve) reps(ctx context.Context, point int, ops []string, w func(op string) (opWindow, []any)) error {
	for rep := 1; rep <= c.o.Reps; rep++ {
		for _, op := range ops {
			c.logf("point %d rep %d/%d: %s", point, rep, c.o.Reps, op)
			win, extra := w(op)
			if _, err := c.window(ctx, point, rep, op, win, extra...); err != nil {
				return err
			}
		}
	}
	return nil
}

// znodes grows the tree to each step and measures the three ops on it.
func (c *curve) znodes(ctx context.Context) error {
	prev := 0
	for _, p := range c.o.Steps {
		pt := fmt.Sprint(p)
		t0 := time.Now()
		if _, err := c.grow(ctx, pt, prev, p); err != nil {
			return err
		}
		growS := time.Since(t0).Seconds()
		added := p - prev
		prev = p
		onTree := func(op string) (opWindow, []any) {
			return opWindow{op: op,
				pick:   func(rng *rand.Rand) (string, bool) { return c.treeName(rng.IntN(p)), true },
				parent: func(rng *rand.Rand) string { return c.treeParent(rng.IntN((p + c.o.Fanout - 1) / c.o.Fanout)) },
			}, []any{"tree", p}
		}
		if c.o.PreWarm > 0 {
			c.logf("point %d: %v of unrecorded getData", p, c.o.PreWarm)
			w, _ := onTree("get")
			w.clients, w.outstanding, w.warmup, w.duration = c.o.Clients, c.o.Outstanding, 0, c.o.PreWarm
			if _, err := runOpWindow(ctx, c.t, w); err != nil {
				return err
			}
		}
		if err := c.reps(ctx, p, []string{"get", "set", "cd"}, onTree); err != nil {
			return err
		}
		s := c.state(ctx, p)
		s.GrowS, s.Added = growS, added
		c.rep.States = append(c.rep.States, s)
		hwm := "na"
		if kb, ok := memKB(c.t.ServerPIDs, "VmHWM"); ok {
			hwm = fmt.Sprint(kb)
		}
		c.emit(pt, 1, "mode", "state", "label", "loaded", "rss_kb", na(s.RSSKB), "hwm_kb", hwm,
			"znode_count", na(s.Znodes), "valid", true)
	}
	return nil
}

// sessions holds more idle sessions at each step and measures the
// servers' idle CPU, then a paced getData load. Detached sessions are
// opened instead of held when asked, and closed at the end.
func (c *curve) sessions(ctx context.Context) (err error) {
	if _, err := c.grow(ctx, "tree", 0, c.o.Tree); err != nil {
		return err
	}
	idleT := c.t
	idleT.SessionTimeout = c.o.IdleTimeout
	idleT.Progress = nil
	var idle []session
	var gone []detached
	defer func() {
		closeAll(idle)
		if len(gone) > 0 {
			err = errors.Join(err, c.closeDetached(ctx, gone))
		}
	}()
	open := func(n int) (int, error) {
		if c.o.Detached {
			dt := idleT
			dt.Progress = c.t.Progress
			more, err := openDetached(ctx, dt, n-len(gone), c.o.IdleTimeout)
			gone = append(gone, more...)
			return len(more), err
		}
		more, err := connectAll(ctx, idleT, n-len(idle), &c.held)
		idle = append(idle, more...)
		return len(more), err
	}
	kind := "idle"
	if c.o.Detached {
		kind = "detached"
	}
	meter := NewCPUMeter(c.t.ServerPIDs)
	for _, n := range c.o.Steps {
		pt := fmt.Sprint(n)
		rss0 := c.rss()
		c.logf("point %d: opening %d %s sessions", n, n-len(idle)-len(gone), kind)
		a := meter.Sample()
		t0 := time.Now()
		added, err := open(n)
		if err != nil {
			return fmt.Errorf("%s sessions: %w", kind, err)
		}
		connS := time.Since(t0).Seconds()
		b := meter.Sample()
		if err := waitFor(ctx, c.o.Settle); err != nil {
			return err
		}
		ia := meter.Sample()
		if err := waitFor(ctx, c.o.IdleWindow); err != nil {
			return err
		}
		ib := meter.Sample()
		s := c.state(ctx, n)
		// One server's count is the ensemble's only where it is the
		// ensemble; elsewhere the close at the end finds expired ones.
		if c.o.Detached && len(c.t.Servers) == 1 && s.Sessions >= 0 && s.Sessions < int64(n) {
			return fmt.Errorf("the servers hold %d sessions, fewer than the %d detached ones: sessions expired", s.Sessions, n)
		}
		s.GrowS, s.Added = connS, added
		kv := []any{"mode", "sessidle", "idle", n, "connect_s", fmt.Sprintf("%.2f", connS),
			"sessions_per_s", fmt.Sprintf("%.0f", float64(added)/max(connS, 1e-9))}
		if c.o.Detached {
			kv = append(kv, "detached", true)
		}
		if cc, err := cpuBetween(a, b, 0); err == nil && cc != nil {
			kv = append(kv, "cpu_server_connect", fmt.Sprintf("%.2f", cc.ServerCores))
		}
		if ic, err := cpuBetween(ia, ib, 0); err == nil && ic != nil {
			s.IdleCPUMsPerS = ic.ServerCores * 1000
			kv = append(kv, "idle_cpu_ms_per_s", fmt.Sprintf("%.2f", s.IdleCPUMsPerS))
		}
		c.rep.States = append(c.rep.States, s)
		c.emit(pt, 1, append(kv, "rss0_kb", rss0, "rss_kb", na(s.RSSKB), "alive_connections", na(s.Connections),
			"global_sessions", na(s.Sessions))...)
		tree := c.o.Tree
		if err := c.reps(ctx, n, []string{"get-sessions"}, func(string) (opWindow, []any) {
			return opWindow{op: "get", rate: c.o.Rate,
				pick: func(rng *rand.Rand) (string, bool) { return c.treeName(rng.IntN(tree)), true },
			}, []any{"idle", n}
		}); err != nil {
			return err
		}
		c.emit(pt, 1, "mode", "sessend", "idle", n, "errors", c.held.count(), "valid", c.held.count() == 0)
	}
	return nil
}

// closeDetached closes the detached sessions, also after an interrupt
// (they would otherwise stay on the target for their long timeout), and
// fails if any had expired: the steps they were counted in are void.
func (c *curve) closeDetached(ctx context.Context, ds []detached) error {
	c.logf("closing %d detached sessions", len(ds))
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Minute)
	defer cancel()
	expired, err := closeDetached(cctx, c.t, ds)
	if expired > 0 {
		err = errors.Join(err, fmt.Errorf("%d of %d detached sessions expired before the end", expired, len(ds)))
	}
	return err
}
