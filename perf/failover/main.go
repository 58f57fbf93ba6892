// Command failover measures how long a ZooKeeper(-compatible) ensemble
// refuses writes after its leader is killed.
//
// It starts an ensemble with ../shared/bench/ensemble.sh (Apache ZooKeeper,
// or any server given by -server-cmd), finds the leader with the srvr
// four-letter word, keeps a writer (setData) running through a client that
// knows only the other servers, kill -9s the leader and reports the time
// from the kill to the first successful write issued after it. The killed
// server is then started again with its own command line, and once the
// ensemble has one leader and all followers back, the next run kills the
// new leader. It prints every run and the median, and stops the ensemble at
// the end, also on failure or interrupt. With -stop the leader is frozen
// (SIGSTOP) instead, then killed once the others have taken over.
//
//	go run ./perf/failover -runs 10                              # Apache
//	go run ./perf/failover -runs 10 -server-cmd '/tmp/zoo server' # Zoo
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Ports as fixed by ensemble.sh: server I serves clients on
// clientBase+I, shifted by $ZKPERF_PORT_OFFSET, which ensemble.sh (our
// child) reads too: two harnesses on one machine need not collide.
var clientBase = 23810 + portOffset()

func portOffset() int {
	n, err := strconv.Atoi(os.Getenv("ZKPERF_PORT_OFFSET"))
	if err != nil {
		return 0
	}
	return n
}

// probePath is the znode the writer overwrites.
const probePath = "/zoo-failover-probe"

type options struct {
	bench      string
	dir        string
	serverCmd  string
	n          int
	runs       int
	session    time.Duration
	settle     time.Duration
	maxWait    time.Duration
	stableWait time.Duration
	writeWait  time.Duration
	stop       bool
	verbose    bool
}

func main() {
	var o options
	flag.StringVar(&o.bench, "bench", "/work/shared/bench", "directory holding ensemble.sh")
	flag.StringVar(&o.dir, "dir", "/tmp/zkperf", "ensemble.sh data directory")
	flag.StringVar(&o.serverCmd, "server-cmd", "", "server command for ensemble.sh --server-cmd (empty: Apache ZooKeeper)")
	flag.IntVar(&o.n, "n", 3, "ensemble size")
	flag.IntVar(&o.runs, "runs", 10, "number of leader kills")
	flag.DurationVar(&o.session, "session-timeout", 10*time.Second, "client session timeout")
	flag.DurationVar(&o.settle, "settle", 3*time.Second, "writes to watch succeed before each kill")
	flag.DurationVar(&o.maxWait, "max-wait", 60*time.Second, "give up on a run after this long without a write")
	flag.DurationVar(&o.stableWait, "stable-wait", 120*time.Second, "how long the ensemble may take to have a leader and all followers")
	flag.DurationVar(&o.writeWait, "write-wait", 200*time.Millisecond, "issue the next write when one is unanswered this long")
	flag.BoolVar(&o.stop, "stop", false, "freeze the leader with SIGSTOP instead of kill -9: no TCP reset tells the others, as when a host hangs or is cut off")
	flag.BoolVar(&o.verbose, "v", false, "log the client library's messages")
	flag.Parse()
	log.SetFlags(log.Ltime | log.Lmicroseconds)
	os.Exit(run(o))
}

func run(o options) int {
	ens := &ensemble{opts: o}
	if err := ens.start(); err != nil {
		log.Printf("start: %v", err)
		ens.stop()
		return 1
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go func() {
		s := <-sig
		log.Printf("%v: stopping the ensemble", s)
		ens.stop()
		os.Exit(130)
	}()
	defer ens.stop()

	var ms []float64
	failed := 0
	for i := 1; i <= o.runs; i++ {
		r, err := ens.once(i)
		if err != nil {
			log.Printf("run %d failed: %v", i, err)
			failed++
			if errors.Is(err, errFatal) {
				break
			}
			continue
		}
		reconnect := "no reconnection"
		if r.reconnect >= 0 {
			reconnect = fmt.Sprintf("session back after %.0f ms", ms1(r.reconnect))
		}
		fmt.Printf("run %d: %s leader s%d (pid %d); first write after %.0f ms (issued %.0f ms after the kill, via %s); %s; new leader s%d; failed writes %v\n",
			i, map[bool]string{false: "killed", true: "froze"}[o.stop], r.leader, r.pid, ms1(r.firstWrite), ms1(r.issued), r.via, reconnect, r.newLeader, r.failures)
		ms = append(ms, ms1(r.firstWrite))
	}
	if len(ms) == 0 {
		fmt.Println("no successful run")
		return 1
	}
	vals := make([]string, len(ms))
	for i, v := range ms {
		vals[i] = strconv.FormatFloat(v, 'f', 0, 64)
	}
	fmt.Printf("RESULT mode=failover signal=%s target=%s runs=%d failed=%d median_ms=%.0f min_ms=%.0f max_ms=%.0f values_ms=%s\n",
		signalName(o.stop), targetName(o.serverCmd), len(ms), failed, median(ms), slices.Min(ms), slices.Max(ms), strings.Join(vals, ","))
	if failed > 0 {
		return 2
	}
	return 0
}

var errFatal = errors.New("cannot continue")

func targetName(cmd string) string {
	if cmd == "" {
		return "apache"
	}
	return strconv.Quote(cmd)
}

func signalName(stop bool) string {
	if stop {
		return "STOP"
	}
	return "KILL"
}

func ms1(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// ensemble drives ensemble.sh and restarts killed servers itself, because
// ensemble.sh has no per-server restart.
type ensemble struct {
	opts    options
	started bool
	stopped bool
	mu      sync.Mutex
}

func (e *ensemble) script() string { return filepath.Join(e.opts.bench, "ensemble.sh") }

func (e *ensemble) start() error {
	args := []string{"start", "-n", strconv.Itoa(e.opts.n), "--dir", e.opts.dir}
	if e.opts.serverCmd != "" {
		args = append(args, "--server-cmd", e.opts.serverCmd)
	}
	cmd := exec.Command(e.script(), args...)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	e.started = true
	if err != nil {
		return fmt.Errorf("ensemble.sh start: %w", err)
	}
	log.Printf("ensemble up: %s", strings.TrimSpace(string(out)))
	return nil
}

func (e *ensemble) stop() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.started || e.stopped {
		return
	}
	e.stopped = true
	cmd := exec.Command(e.script(), "stop", "--dir", e.opts.dir)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		log.Printf("ensemble.sh stop: %v", err)
	}
}

func (e *ensemble) cfgPath(i int) string {
	return filepath.Join(e.opts.dir, fmt.Sprintf("s%d", i), "zoo.cfg")
}
func (e *ensemble) pidPath(i int) string {
	return filepath.Join(e.opts.dir, fmt.Sprintf("s%d", i), "pid")
}
func (e *ensemble) logPath(i int) string {
	return filepath.Join(e.opts.dir, fmt.Sprintf("s%d", i), "server.log")
}
func addr(i int) string { return "127.0.0.1:" + strconv.Itoa(clientBase+i) }

// proc is a server process as ensemble.sh (or we) started it.
type proc struct {
	pid  int
	argv []string
	cwd  string
}

// server returns server i's process, checking that the PID in its pid file
// still runs that server's config (as ensemble.sh does), so that a recycled
// PID is never killed.
func (e *ensemble) server(i int) (proc, error) {
	b, err := os.ReadFile(e.pidPath(i))
	if err != nil {
		return proc{}, err
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return proc{}, fmt.Errorf("pid file of s%d: %w", i, err)
	}
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return proc{}, fmt.Errorf("s%d (pid %d) is not running: %w", i, pid, err)
	}
	argv := strings.Split(strings.TrimRight(string(raw), "\x00"), "\x00")
	if !slices.Contains(argv, e.cfgPath(i)) {
		return proc{}, fmt.Errorf("pid %d is not s%d: %q", pid, i, argv)
	}
	cwd, err := os.Readlink(fmt.Sprintf("/proc/%d/cwd", pid))
	if err != nil {
		return proc{}, err
	}
	return proc{pid: pid, argv: argv, cwd: cwd}, nil
}

// restart starts server i again with the command line it had, its output
// appended to its log, in its own session like ensemble.sh does, and
// records its PID where ensemble.sh stop will find it.
func (e *ensemble) restart(i int, p proc) error {
	if err := e.waitPorts(i); err != nil {
		return err
	}
	lf, err := os.OpenFile(e.logPath(i), os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	defer lf.Close()
	path, err := exec.LookPath(p.argv[0])
	if err != nil {
		return err
	}
	cmd := exec.Command(path, p.argv[1:]...)
	cmd.Args[0] = p.argv[0]
	cmd.Dir = p.cwd
	cmd.Stdout, cmd.Stderr = lf, lf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return err
	}
	// Reap it when it exits, so that ensemble.sh stop does not wait on a zombie.
	go func() { _ = cmd.Wait() }()
	return os.WriteFile(e.pidPath(i), []byte(strconv.Itoa(cmd.Process.Pid)+"\n"), 0o644)
}

// mode asks server i for its role with the srvr four-letter word.
func mode(i int) string {
	c, err := net.DialTimeout("tcp", addr(i), time.Second)
	if err != nil {
		return "down"
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := io.WriteString(c, "srvr"); err != nil {
		return "down"
	}
	sc := bufio.NewScanner(c)
	for sc.Scan() {
		if m, ok := strings.CutPrefix(sc.Text(), "Mode: "); ok {
			return strings.TrimSpace(m)
		}
	}
	return "unknown"
}

// stable waits until every server answers and exactly one leads, and
// returns the leader.
func (e *ensemble) stable() (int, error) {
	deadline := time.Now().Add(e.opts.stableWait)
	var modes []string
	for time.Now().Before(deadline) {
		modes = modes[:0]
		leader, followers := 0, 0
		for i := 1; i <= e.opts.n; i++ {
			m := mode(i)
			modes = append(modes, fmt.Sprintf("s%d=%s", i, m))
			switch m {
			case "leader":
				if leader == 0 {
					leader = i
				} else {
					leader = -1
				}
			case "follower":
				followers++
			}
		}
		if leader > 0 && followers == e.opts.n-1 {
			return leader, nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return 0, fmt.Errorf("no stable ensemble after %v: %s", e.opts.stableWait, strings.Join(modes, " "))
}

type result struct {
	leader, newLeader int
	pid               int
	reconnect         time.Duration // kill -> the client's session is usable again
	firstWrite        time.Duration // kill -> first successful write issued after the kill
	issued            time.Duration // kill -> that write was issued
	via               string
	failures          map[string]int
}

// once kills the leader and measures one failover.
func (e *ensemble) once(n int) (result, error) {
	var r result
	leader, err := e.stable()
	if err != nil {
		return r, fmt.Errorf("%w: %w", errFatal, err)
	}
	p, err := e.server(leader)
	if err != nil {
		return r, fmt.Errorf("%w: %w", errFatal, err)
	}
	r.leader, r.pid = leader, p.pid
	var others []string
	for i := 1; i <= e.opts.n; i++ {
		if i != leader {
			others = append(others, addr(i))
		}
	}

	w, err := newWriter(others, e.opts)
	if err != nil {
		return r, fmt.Errorf("%w: %w", errFatal, err)
	}
	defer w.close()
	if ok := w.waitSuccess(time.Now(), e.opts.settle+10*time.Second); !ok {
		return r, fmt.Errorf("%w: writer made no write before the kill", errFatal)
	}
	time.Sleep(e.opts.settle)
	if !w.recentSuccess(500 * time.Millisecond) {
		return r, fmt.Errorf("%w: writes were failing before the kill", errFatal)
	}

	t0 := time.Now()
	w.markKill(t0)
	sig := syscall.SIGKILL
	if e.opts.stop {
		sig = syscall.SIGSTOP
	}
	if err := syscall.Kill(p.pid, sig); err != nil {
		return r, fmt.Errorf("%w: kill %d: %w", errFatal, p.pid, err)
	}
	log.Printf("run %d: kill -%s leader s%d (pid %d); writing through %s", n, signalName(e.opts.stop), leader, p.pid, strings.Join(others, ","))
	ok := w.waitSuccess(t0, e.opts.maxWait)
	first, reconnect, failures := w.after(t0)
	w.close()
	if e.opts.stop { // the frozen leader goes for good: it is started again below
		_ = syscall.Kill(p.pid, syscall.SIGKILL)
	}
	waitGone(p.pid)
	if !ok {
		for i := 1; i <= e.opts.n; i++ {
			log.Printf("  s%d mode %s", i, mode(i))
		}
		_ = e.restart(leader, p)
		return r, fmt.Errorf("no successful write within %v of the kill (failed writes %v)", e.opts.maxWait, failures)
	}
	r.firstWrite, r.issued, r.via = first.done.Sub(t0), first.issued.Sub(t0), first.server
	r.reconnect = reconnect
	r.failures = failures
	for i := 1; i <= e.opts.n; i++ {
		if i != leader && mode(i) == "leader" {
			r.newLeader = i
		}
	}
	if err := e.restart(leader, p); err != nil {
		return r, fmt.Errorf("%w: restart s%d: %w", errFatal, leader, err)
	}
	return r, nil
}

// waitGone waits until a killed process has left /proc, or is a zombie
// whose threads have all exited. A zombie group leader alone is not enough:
// the other threads of a killed multi-threaded process may still hold its
// sockets (a restarted server then failed with "bind: address already in
// use").
func waitGone(pid int) {
	for range 500 {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return
		}
		if f := strings.Fields(string(b)); len(f) > 2 && f[2] == "Z" {
			if tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid)); err == nil && len(tasks) <= 1 {
				return
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitPorts waits until the listening ports of server i in its zoo.cfg
// (clientPort and its server.i quorum and election ports) can be bound.
func (e *ensemble) waitPorts(i int) error {
	b, err := os.ReadFile(e.cfgPath(i))
	if err != nil {
		return err
	}
	var addrs []string
	for line := range strings.Lines(string(b)) {
		k, v, _ := strings.Cut(strings.TrimSpace(line), "=")
		switch {
		case k == "clientPort":
			addrs = append(addrs, "127.0.0.1:"+v)
		case k == "server."+strconv.Itoa(i):
			f := strings.Split(strings.SplitN(v, ";", 2)[0], ":")
			for _, port := range f[1:min(len(f), 3)] {
				addrs = append(addrs, net.JoinHostPort(f[0], port))
			}
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for _, a := range addrs {
		for {
			l, err := net.Listen("tcp", a)
			if err == nil {
				l.Close()
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("port of s%d still busy: %w", i, err)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	return nil
}
