package bench

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/zoohq/zoo/internal/zktest"
)

// smallCurve is a quick curve: short windows, a small load.
func smallCurve(axis string, steps ...int) CurveOptions {
	return CurveOptions{Axis: axis, Steps: steps, Reps: 1, Duration: 300 * time.Millisecond, Warmup: 50 * time.Millisecond,
		PreWarm: -1, Clients: 2, Outstanding: 4, Fanout: 100, Settle: 50 * time.Millisecond,
		IdleWindow: 200 * time.Millisecond, Rate: 500, WatchSessions: 10, Seed: 1}
}

// runCurve runs the curve against an in-process server metered as this
// process (the server's CPU and RSS are the test's), and checks that
// the lines it wrote are the report's and that scale.sh's reader reads
// them.
func runCurve(t *testing.T, addr string, o CurveOptions) (*CurveReport, []ScaleRecord) {
	t.Helper()
	tg := testTarget(t, addr)
	tg.ServerPIDs = []int{os.Getpid()}
	var lines bytes.Buffer
	o.Lines = &lines
	rep, err := Curve(context.Background(), tg, o)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Valid() {
		t.Fatalf("curve not valid:\n%s", strings.Join(rep.Lines, "\n"))
	}
	if got, want := lines.String(), strings.Join(rep.Lines, "\n")+"\n"; got != want {
		t.Errorf("lines written:\n%s\nreport's lines:\n%s", got, want)
	}
	recs, err := ReadScale(&lines)
	if err != nil {
		t.Fatal(err)
	}
	if recs[0]["mode"] != "env" || recs[0]["cand_name"] != "zoo" {
		t.Errorf("first line %v: want the env line naming the target zoo (from srvr)", recs[0])
	}
	if rc := client(t, addr); true {
		if ok, _, err := rc.Exists(context.Background(), tg.Root); err != nil || ok {
			t.Errorf("%s left behind after the curve (exists %v, %v)", tg.Root, ok, err)
		}
	}
	return rep, recs
}

// find returns the records of a mode (and op, for ops) at a point.
func find(recs []ScaleRecord, mode, op, point string) []ScaleRecord {
	var out []ScaleRecord
	for _, r := range recs {
		if r["mode"] == mode && r["point"] == point && (op == "" || r["op"] == op) {
			out = append(out, r)
		}
	}
	return out
}

func TestCurveZnodes(t *testing.T) {
	addr := startZoo(t)
	rep, recs := runCurve(t, addr, smallCurve("znodes", 100, 1000))
	for _, p := range []string{"100", "1000"} {
		for _, op := range []string{"get", "set", "cd"} {
			rs := find(recs, "ops", op, p)
			if len(rs) != 1 || rs[0]["target"] != "zoo" || rs[0]["axis"] != "znodes" || rs[0]["tree"] != p {
				t.Fatalf("point %s op %s: lines %v", p, op, rs)
			}
			if v, ok := rs[0].num("srv_us_per_op"); !ok || v <= 0 {
				t.Errorf("point %s op %s: srv_us_per_op %q", p, op, rs[0]["srv_us_per_op"])
			}
			if v, ok := rs[0].num("p99_ms"); !ok || v <= 0 {
				t.Errorf("point %s op %s: p99_ms %q", p, op, rs[0]["p99_ms"])
			}
		}
		if fill := find(recs, "fill", "", p); len(fill) != 1 || fill[0]["valid"] != "true" {
			t.Errorf("point %s: fill lines %v", p, fill)
		}
	}
	// The tree really grew by the steps: the server's own count moves by
	// exactly the znodes the second fill added, 900 and their 9 new
	// parents (create+delete leaves none).
	if len(rep.States) != 2 {
		t.Fatalf("%d states, want 2", len(rep.States))
	}
	s0, s1 := rep.States[0], rep.States[1]
	if s0.Znodes < 100 || s1.Znodes-s0.Znodes != 909 || s1.Added != 900 {
		t.Errorf("znode counts %d then %d (added %d), want the second 909 more", s0.Znodes, s1.Znodes, s1.Added)
	}
	st := find(recs, "state", "", "1000")
	if len(st) != 1 || st[0]["label"] != "loaded" || st[0]["znode_count"] == "na" || st[0]["rss_kb"] == "na" {
		t.Errorf("state line %v", st)
	}
	// zoo bench plot draws the lines: CPU, p99 and RSS against znodes.
	charts := ScaleCharts(recs, "znodes")
	if len(charts) != 3 {
		t.Fatalf("%d charts, want 3", len(charts))
	}
	if s := seriesByName(t, charts[0], "zoo create+delete"); len(s.Points) != 2 || s.Points[1].X != 1000 {
		t.Errorf("create+delete series %v", s.Points)
	}
	var svg bytes.Buffer
	if err := WriteSVG(&svg, charts...); err != nil || !strings.Contains(svg.String(), "Server CPU per operation against znodes") {
		t.Errorf("svg: %v", err)
	}
	var table bytes.Buffer
	if err := rep.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(table.String(), "1000         cd") || !strings.Contains(table.String(), "1.00×") {
		t.Errorf("table:\n%s", table.String())
	}
}

func TestCurveWatches(t *testing.T) {
	addr := startZoo(t)
	o := smallCurve("watches", 0, 500)
	o.Tree = 800
	o.Reps = 2 // the second repetition fires watches set again after the first
	rep, recs := runCurve(t, addr, o)
	if w := rep.States; len(w) != 2 || w[0].Watches != 0 || w[1].Watches != 500 {
		t.Fatalf("states %+v: want the server to count 0 then 500 watches", w)
	}
	load := find(recs, "watchload", "", "500")
	if len(load) != 1 || load[0]["wchs_total"] != "500" || load[0]["wchs_conns"] != "10" {
		t.Errorf("watchload line %v: want wchs 500 watches on 10 connections", load)
	}
	if len(find(recs, "ops", "set-watched", "0")) != 0 {
		t.Error("a set-watched window with no watches")
	}
	fired := find(recs, "ops", "set-watched", "500")
	if len(fired) != 2 {
		t.Fatalf("set-watched lines %v, want 2", fired)
	}
	for _, f := range fired {
		if f["fired"] == "0" || f["fired"] != f["delivered"] {
			t.Errorf("set-watched: fired %s, delivered %s", f["fired"], f["delivered"])
		}
	}
	if n := len(find(recs, "ops", "set-unwatched", "500")); n != 2 {
		t.Errorf("%d set-unwatched lines at 500, want 2", n)
	}
	if charts := ScaleCharts(recs, "watches"); len(charts) != 3 {
		t.Errorf("%d charts, want 3", len(charts))
	}
}

func TestCurveSessions(t *testing.T) {
	addr := startZoo(t)
	o := smallCurve("sessions", 10, 50)
	o.Tree = 200
	rep, recs := runCurve(t, addr, o)
	// 4 sessions of the curve's own, and the idle ones.
	for i, want := range []int64{10, 50} {
		if s := rep.States[i]; s.Connections < want+4 || s.Added != int(want)-[]int{0, 10}[i] {
			t.Errorf("step %d: %d connections (added %d), want at least %d", want, s.Connections, s.Added, want+4)
		}
	}
	idle := find(recs, "sessidle", "", "50")
	if len(idle) != 1 || idle[0]["idle_cpu_ms_per_s"] == "" || idle[0]["rss_kb"] == "na" {
		t.Errorf("sessidle line %v", idle)
	}
	get := find(recs, "ops", "get-sessions", "50")
	if len(get) != 1 || get[0]["rate"] != "500" || get[0]["idle"] != "50" {
		t.Fatalf("get-sessions lines %v", get)
	}
	// Paced at 500/s: the rate is kept, never exceeded.
	if v, _ := get[0].num("ops_per_s"); v > 550 || v < 250 {
		t.Errorf("paced getData at %v/s, want about 500", v)
	}
	if charts := ScaleCharts(recs, "sessions"); len(charts) != 3 {
		t.Errorf("%d charts, want 3", len(charts))
	}
}

func TestCurveOptionsRefused(t *testing.T) {
	addr := startZoo(t)
	tg := testTarget(t, addr)
	for _, o := range []CurveOptions{
		{Axis: "leaves", Steps: []int{1}},
		{Axis: "znodes"},
		{Axis: "znodes", Steps: []int{100, 10}},
		{Axis: "watches", Steps: []int{10}, Tree: 10},
	} {
		if _, err := Curve(context.Background(), tg, o); !errors.Is(err, ErrBadOptions) {
			t.Errorf("%+v: %v, want ErrBadOptions", o, err)
		}
	}
}

// A kept curve's znodes are not taken for a fresh start's.
func TestCurveKeepThenRefuse(t *testing.T) {
	addr := startZoo(t)
	tg := testTarget(t, addr)
	o := smallCurve("znodes", 50)
	o.Keep = true
	if _, err := Curve(context.Background(), tg, o); err != nil {
		t.Fatal(err)
	}
	kids, _, err := client(t, addr).Children(context.Background(), tg.Root+"/curve/fill/d00000")
	if err != nil || len(kids) != 50 {
		t.Fatalf("kept tree: %d znodes, %v; want 50", len(kids), err)
	}
	if _, err := Curve(context.Background(), tg, o); !errors.Is(err, ErrCurveExists) {
		t.Errorf("second curve on the kept tree: %v, want ErrCurveExists", err)
	}
}

// The curve against Apache 3.8, the oracle: its four-letter words (srvr
// for the name, mntr and wchs for the counts) read as Zoo's do, and its
// watches fire and are counted the same way.
func TestCurveAgainstApache(t *testing.T) {
	srv, err := zktest.Apache{TickTimeMs: 500, Extra: []string{"4lw.commands.whitelist=*"}}.Start(t.TempDir())
	if errors.Is(err, zktest.ErrUnavailable) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	tg := testTarget(t, srv.Addr)
	tg.ServerPIDs = []int{srv.PID()}
	o := smallCurve("watches", 0, 200)
	o.Tree = 300
	var lines bytes.Buffer
	o.Lines = &lines
	rep, err := Curve(context.Background(), tg, o)
	if err != nil {
		t.Fatalf("%v\n%s", err, srv.Tail(20))
	}
	if !rep.Valid() || rep.Target != "apache" {
		t.Fatalf("target %q, valid %v:\n%s", rep.Target, rep.Valid(), lines.String())
	}
	if s := rep.States; len(s) != 2 || s[1].Watches != 200 || s[1].RSSKB <= 0 || s[1].Znodes < 300 {
		t.Errorf("states %+v: want Apache to count 200 watches on a 300-znode tree, and its RSS", s)
	}
	recs, err := ReadScale(&lines)
	if err != nil {
		t.Fatal(err)
	}
	if l := find(recs, "watchload", "", "200"); len(l) != 1 || l[0]["wchs_total"] != "200" {
		t.Errorf("watchload %v", l)
	}
	if f := find(recs, "ops", "set-watched", "200"); len(f) != 1 || f[0]["fired"] != f[0]["delivered"] || f[0]["srv_us_per_op"] == "" {
		t.Errorf("set-watched %v", f)
	}
}

// The clean-up removes what the curve made, and only that: a root that
// was there before stays, even empty.
func TestCurveLeavesWhatWasThere(t *testing.T) {
	addr := startZoo(t)
	tg := testTarget(t, addr)
	c := client(t, addr)
	ctx := context.Background()
	if err := ensurePath(ctx, c, tg.Root); err != nil {
		t.Fatal(err)
	}
	if _, err := Curve(ctx, tg, smallCurve("znodes", 20)); err != nil {
		t.Fatal(err)
	}
	kids, _, err := c.Children(ctx, tg.Root)
	if err != nil || len(kids) != 0 {
		t.Errorf("%s after the curve: children %v, %v; want it there, empty", tg.Root, kids, err)
	}
}
