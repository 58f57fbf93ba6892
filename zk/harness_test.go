package zk

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zoohq/zoo/internal/zktest"
)

// The client is tested against real servers. A target is a server
// implementation: start runs one (standalone, its settings below) and
// returns its client address and a function that stops it. Apache
// ZooKeeper 3.8 is the oracle; Zoo registers itself the same way:
//
//	func init() { targets = append(targets, target{"zoo", startZoo}) }
//
// Every target must run with: tickTime 500 ms (sessions of 1 s to 10 s),
// extended types (TTL nodes) on, container reaping every 100 ms.
//
// startReadOnly, if set, starts a server in read-only mode (a member of an
// ensemble that has lost its quorum); tests of read-only mode skip without it.
type target struct {
	name          string
	start         func(testing.TB) (addr string, stop func())
	startReadOnly func(testing.TB) (addr string, stop func())
}

var targets = []target{{name: "apache", start: startApache, startReadOnly: startApacheReadOnly}}

// server is a target's server, started by the first test that needs it
// and shared by the package's tests (each works under its own root znode).
type server struct {
	once sync.Once
	addr string
	stop func()
	skip string // non-empty: tests needing the server skip with this
}

var (
	serversMu sync.Mutex
	servers   = map[string]*server{}
)

func TestMain(m *testing.M) {
	code := m.Run()
	serversMu.Lock()
	for _, s := range servers {
		if s.stop != nil {
			s.stop()
		}
	}
	serversMu.Unlock()
	if code == 0 {
		if err := checkGoroutines(5 * time.Second); err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = 1
		}
	}
	os.Exit(code)
}

// forEachTarget runs fn as a parallel subtest per target.
func forEachTarget(t *testing.T, fn func(t *testing.T, e *env)) {
	t.Helper()
	for _, tg := range targets {
		t.Run(tg.name, func(t *testing.T) {
			t.Parallel()
			fn(t, newEnv(t, tg))
		})
	}
}

func serverFor(t *testing.T, tg target) string {
	t.Helper()
	return sharedServer(t, tg.name, tg.start)
}

// sharedServer starts the server named key with start, once per package
// run, and returns its address; the test skips if it could not start.
func sharedServer(t *testing.T, key string, start func(testing.TB) (string, func())) string {
	t.Helper()
	serversMu.Lock()
	s := servers[key]
	if s == nil {
		s = &server{}
		servers[key] = s
	}
	serversMu.Unlock()
	s.once.Do(func() {
		tb := &startTB{TB: t}
		done := make(chan struct{})
		go func() { // Skip and Fatal end this goroutine only
			defer close(done)
			s.addr, s.stop = start(tb)
		}()
		<-done
		if s.addr == "" {
			s.skip = strings.Join(tb.msgs, "; ")
			if s.skip == "" {
				s.skip = "server did not start"
			}
		}
	})
	if s.skip != "" {
		t.Skipf("%s: %s", key, s.skip)
	}
	return s.addr
}

// startTB lets a target's start outlive the test that triggered it: its
// temp dirs and cleanups are the start function's own business, and a
// skip or failure is recorded for every test that needs the server.
type startTB struct {
	testing.TB
	mu   sync.Mutex
	msgs []string
}

func (s *startTB) note(msg string)          { s.mu.Lock(); s.msgs = append(s.msgs, msg); s.mu.Unlock() }
func (s *startTB) Helper()                  {}
func (s *startTB) Logf(string, ...any)      {}
func (s *startTB) Skip(a ...any)            { s.note(fmt.Sprint(a...)); runtime.Goexit() }
func (s *startTB) Skipf(f string, a ...any) { s.note(fmt.Sprintf(f, a...)); runtime.Goexit() }
func (s *startTB) Fatal(a ...any)           { s.note("failed: " + fmt.Sprint(a...)); runtime.Goexit() }
func (s *startTB) Fatalf(f string, a ...any) {
	s.note("failed: " + fmt.Sprintf(f, a...))
	runtime.Goexit()
}

// env is one test's view of one target: the server's address and a root
// znode the test owns.
type env struct {
	t    *testing.T
	name string
	addr string
	root string
}

var unsafeChars = regexp.MustCompile(`[^A-Za-z0-9_-]+`)

func newEnv(t *testing.T, tg target) *env {
	addr := serverFor(t, tg)
	var b [4]byte
	_, _ = rand.Read(b[:])
	e := &env{t: t, name: tg.name, addr: addr,
		root: "/t-" + unsafeChars.ReplaceAllString(t.Name(), "_") + "-" + hex.EncodeToString(b[:])}
	c := e.connect()
	if _, _, err := c.Create(ctx(t), e.root, nil, Persistent, OpenACLUnsafe()); err != nil {
		t.Fatalf("create test root %s: %v", e.root, err)
	}
	_ = c.Close()
	return e
}

// p is a path under the test's root.
func (e *env) p(rel string) string { return e.root + "/" + rel }

// connect opens a session to the target's server; it is closed when the
// test ends.
func (e *env) connect(opts ...Option) *Client {
	e.t.Helper()
	return e.connectTo(e.addr, opts...)
}

func (e *env) connectTo(addr string, opts ...Option) *Client {
	e.t.Helper()
	opts = append([]Option{WithLogger(testLogger(e.t))}, opts...)
	c, err := Connect(ctx(e.t), addr, opts...)
	if err != nil {
		e.t.Fatalf("connect %s: %v", addr, err)
	}
	e.t.Cleanup(func() { _ = c.Close() })
	return c
}

// ctx is a context for one call in a test: generous, because a loaded
// machine running the race detector next to a JVM is slow.
func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}

// testLogger sends the client's log to t.Log while the test runs.
func testLogger(t *testing.T) *slog.Logger {
	w := &tlogWriter{t: t}
	t.Cleanup(w.stop)
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type tlogWriter struct {
	mu      sync.Mutex
	t       *testing.T
	stopped bool
}

func (w *tlogWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.stopped {
		w.t.Log(strings.TrimSuffix(string(p), "\n"))
	}
	return len(p), nil
}

func (w *tlogWriter) stop() { w.mu.Lock(); w.stopped = true; w.mu.Unlock() }

// must fails the test on an error.
func must(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// recv waits for one event on ch.
func recv(t *testing.T, ch <-chan Event) Event {
	t.Helper()
	select {
	case ev, ok := <-ch:
		if !ok {
			t.Fatalf("watch channel closed without an event")
		}
		return ev
	case <-time.After(20 * time.Second):
		t.Fatalf("no event within 20s")
	}
	return Event{}
}

// expectEvent waits for an event of type typ on path.
func expectEvent(t *testing.T, ch <-chan Event, typ EventType, path string) {
	t.Helper()
	if ev := recv(t, ch); ev.Type != typ || ev.Path != path || ev.Err != nil {
		t.Fatalf("event %+v, want %v on %s", ev, typ, path)
	}
}

// expectClosed checks that ch is closed with nothing left in it.
func expectClosed(t *testing.T, ch <-chan Event) {
	t.Helper()
	select {
	case ev, ok := <-ch:
		if ok {
			t.Fatalf("unexpected event %+v; want the channel closed", ev)
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("channel not closed within 20s")
	}
}

// noEvent checks that ch holds no event right now.
func noEvent(t *testing.T, ch <-chan Event) {
	t.Helper()
	select {
	case ev := <-ch:
		t.Fatalf("unexpected event %+v", ev)
	default:
	}
}

// stateLog records state changes from WithStateCallback.
type stateLog struct {
	mu      sync.Mutex
	states  []State
	changed chan struct{}
}

func newStateLog() *stateLog { return &stateLog{changed: make(chan struct{})} }

func (l *stateLog) option() Option { return WithStateCallback(l.add) }

func (l *stateLog) add(s State) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.states = append(l.states, s)
	close(l.changed)
	l.changed = make(chan struct{})
}

func (l *stateLog) snapshot() ([]State, <-chan struct{}) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]State(nil), l.states...), l.changed
}

// wait waits for state s at or after index from and returns its index.
func (l *stateLog) wait(t *testing.T, s State, from int, timeout time.Duration) int {
	t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		states, changed := l.snapshot()
		for i := from; i < len(states); i++ {
			if states[i] == s {
				return i
			}
		}
		select {
		case <-changed:
		case <-deadline.C:
			t.Fatalf("no state %v within %v; states: %v", s, timeout, states)
		}
	}
}

// waitFor polls cond until it holds or timeout passes. Only for
// conditions nothing signals (such as the runtime's goroutine list).
func waitFor(timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond) // polling; there is nothing to wait on
	}
	return true
}

// checkGoroutines waits for every goroutine running the package's
// non-test code to exit.
func checkGoroutines(timeout time.Duration) error {
	var leaked []string
	if waitFor(timeout, func() bool { leaked = clientGoroutines(); return len(leaked) == 0 }) {
		return nil
	}
	return fmt.Errorf("zk: %d goroutines still running after the tests:\n\n%s", len(leaked), strings.Join(leaked, "\n\n"))
}

var ownCode = regexp.MustCompile(`/zk/[a-z_]+\.go:`)

func clientGoroutines() []string {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var out []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		for _, m := range ownCode.FindAllString(g, -1) {
			if !strings.Contains(m, "_test.go") {
				out = append(out, g)
				break
			}
		}
	}
	return out
}

// --- Apache -----------------------------------------------------------------

// startApache runs Debian's ZooKeeper 3.8 (apt install zookeeper) in a
// temp dir.
func startApache(t testing.TB) (string, func()) { return startApacheMode(t, false) }

// startApacheReadOnly runs one member of a three-server ensemble whose
// other members never start, with read-only mode enabled: it serves
// read-only sessions once it gives up finding a quorum (about 2 s).
func startApacheReadOnly(t testing.TB) (string, func()) { return startApacheMode(t, true) }

func startApacheMode(t testing.TB, readOnly bool) (string, func()) {
	dir, err := os.MkdirTemp("", "zk-apache-")
	if err != nil {
		t.Fatalf("temp dir: %v", err)
	}
	cfg := zktest.Apache{TickTimeMs: 500, ExtendedTypes: true, ContainerCheckIntervalMs: 100}
	if readOnly {
		cfg = zktest.Apache{TickTimeMs: 200, ExtendedTypes: true, ReadOnly: true}
	}
	srv, err := cfg.Start(dir)
	if err != nil {
		_ = os.RemoveAll(dir)
		if errors.Is(err, zktest.ErrUnavailable) {
			t.Skip(err)
		}
		t.Fatalf("start Apache ZooKeeper: %v", err)
	}
	return srv.Addr, func() {
		srv.Stop()
		_ = os.RemoveAll(dir)
	}
}
