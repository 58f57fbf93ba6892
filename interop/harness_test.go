// Package interop runs one suite of assertions, through a ZooKeeper client
// that no one here wrote (github.com/go-zookeeper/zk), against every
// registered target server. Apache ZooKeeper 3.8 is the oracle: every
// assertion passes against it, so each one states Apache's real behaviour,
// and Zoo must pass the same assertions unchanged.
//
// A target is registered in an init function (see apache_test.go; Zoo's is
// zoo_test.go). Servers are expensive to start, so one server is shared per
// (target, Options) for the whole package run and stopped in TestMain. Every
// test works under its own root znode, so tests run in parallel on a shared
// server.
package interop

import (
	"context"
	"crypto/rand"
	"crypto/sha1"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zoohq/zoo/internal/jute"
	"github.com/zoohq/zoo/internal/zktest"
)

// Options are the server settings a test needs. Each distinct value gets its
// own server per target. A target maps them to its own configuration; the
// Apache target maps them to zoo.cfg keys and JVM system properties.
type Options struct {
	// SuperDigest enables the digest super user: "super:<base64 sha1>" as
	// produced by digest("super:password"). Empty disables it.
	SuperDigest string
	// ExtendedTypes enables TTL nodes (zoo.cfg extendedTypesEnabled=true).
	ExtendedTypes bool
	// MinSessionTimeoutMs and MaxSessionTimeoutMs bound the negotiated
	// session timeout; 0 means the default (2 and 20 ticks).
	MinSessionTimeoutMs, MaxSessionTimeoutMs int
	// ContainerCheckIntervalMs is how often empty containers and expired
	// TTL nodes are reaped (znode.container.checkIntervalMs); 0 = default.
	ContainerCheckIntervalMs int
	// TickTimeMs is zoo.cfg tickTime; 0 means 2000.
	TickTimeMs int
	// EnforceQuota makes hard quota limits fail requests with
	// QuotaExceeded (Apache's zookeeper.enforceQuota).
	EnforceQuota bool
}

// A Target is a server implementation under test. Start starts a server
// with the given options and returns its client address (host:port) and a
// function that stops it. Start may use t.TempDir, t.Cleanup, t.Skip and
// t.Fatal: the harness gives it a TB whose temp dirs and cleanups live until
// the end of the package run, and turns a skip or failure into the same
// outcome for every test that needs that server.
//
// Start runs on a goroutine of its own; besides the methods above it may
// use Log, Logf, Name, Helper and Context (cancelled at the end of the
// package run), but not Setenv or Chdir.
//
// Beyond Options, every target must serve as Apache's test server does
// (see apacheConfig): a standalone server ("Mode: standalone" in srvr) on
// 127.0.0.1; the four-letter words ruok, srvr and cons enabled
// (4lw.commands.whitelist=*); no per-IP connection limit in the way
// (maxClientCnxns=0); jute.maxbuffer at its default, 0xfffff.
type Target struct {
	Name  string
	Start func(t testing.TB, o Options) (addr string, stop func())
	// Mode is what srvr says of the server at addr; empty means
	// "standalone".
	Mode string
}

// targets holds every registered target, in registration order.
var targets []Target

// register adds a target; call it from an init function.
func register(tg Target) { targets = append(targets, tg) }

// Common option sets. Tests use these so that few servers are started.
var (
	// stdOpts serves most tests. The short tick makes session expiry
	// quick (the minimum session timeout is 2 ticks, 1s); the maximum is
	// raised so that ordinary clients keep their 15s sessions.
	stdOpts = Options{
		SuperDigest:              superDigest,
		ExtendedTypes:            true,
		MaxSessionTimeoutMs:      30000,
		ContainerCheckIntervalMs: 100,
		TickTimeMs:               500,
	}
	// plainOpts has extended types off and narrow session-timeout bounds.
	plainOpts = Options{MinSessionTimeoutMs: 3000, MaxSessionTimeoutMs: 6000}
)

// superDigest is digest("super:superpw"), in the form Apache's
// DigestAuthenticationProvider.superDigest expects.
var superDigest = "super:" + digestOf("super", "superpw")

func TestMain(m *testing.M) {
	code := m.Run()
	if code != 0 {
		printFailureReports()
	}
	stopServers()
	if code == 0 {
		if err := checkGoroutines(5 * time.Second); err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = 1
		}
	}
	os.Exit(code)
}

// --- shared servers ---------------------------------------------------------

type serverKey struct {
	target string
	opts   Options
}

// sharedServer is one running server, started once by whichever test needs
// it first.
type sharedServer struct {
	once    sync.Once
	addr    string
	stop    func()
	skipped string // non-empty: every test needing this server skips
	failed  string // non-empty: every test needing this server fails
}

var (
	serversMu sync.Mutex
	servers   = map[serverKey]*sharedServer{}

	// pkgCleanups run after every server has stopped (temp dirs etc.).
	pkgCleanupsMu sync.Mutex
	pkgCleanups   []func()
	// failureReports are printed when a test failed.
	failureReports []func() string

	pkgCtx, pkgCancel = context.WithCancel(context.Background())
)

// serverAddr returns the address of tg's server for o, starting it if this
// is the first test to need it.
func serverAddr(t *testing.T, tg Target, o Options) string {
	t.Helper()
	serversMu.Lock()
	s := servers[serverKey{tg.Name, o}]
	if s == nil {
		s = &sharedServer{}
		servers[serverKey{tg.Name, o}] = s
	}
	serversMu.Unlock()

	s.once.Do(func() { s.start(t, tg, o) })
	switch {
	case s.skipped != "":
		t.Skipf("%s: %s", tg.Name, s.skipped)
	case s.failed != "":
		t.Fatalf("%s: server with %+v did not start: %s", tg.Name, o, s.failed)
	}
	return s.addr
}

func (s *sharedServer) start(t *testing.T, tg Target, o Options) {
	stb := &startTB{TB: t, name: fmt.Sprintf("%s%+v", tg.Name, o)}
	done := make(chan struct{})
	// A separate goroutine, so that Skip/Fatal inside Start (runtime.Goexit)
	// end only the start, and the outcome is recorded for every test.
	go func() {
		defer close(done)
		s.addr, s.stop = tg.Start(stb, o)
	}()
	<-done
	stb.mu.Lock()
	defer stb.mu.Unlock()
	switch {
	case stb.skipped:
		s.skipped = strings.Join(stb.msgs, "; ")
	case stb.failed:
		s.failed = strings.Join(stb.msgs, "; ")
	case s.addr == "":
		s.failed = "Start returned no address"
	default:
		t.Logf("%s: started %s at %s", tg.Name, stb.name, s.addr)
	}
}

func stopServers() {
	pkgCancel()
	serversMu.Lock()
	defer serversMu.Unlock()
	for _, s := range servers {
		if s.stop != nil {
			s.stop()
		}
	}
	pkgCleanupsMu.Lock()
	cleanups := pkgCleanups
	pkgCleanups = nil
	pkgCleanupsMu.Unlock()
	for i := len(cleanups) - 1; i >= 0; i-- {
		cleanups[i]()
	}
}

// onFailure registers a report (say, the tail of a server's log) printed
// when any test of the package fails.
func onFailure(report func() string) {
	pkgCleanupsMu.Lock()
	defer pkgCleanupsMu.Unlock()
	failureReports = append(failureReports, report)
}

func printFailureReports() {
	pkgCleanupsMu.Lock()
	defer pkgCleanupsMu.Unlock()
	for _, r := range failureReports {
		fmt.Fprintln(os.Stderr, r())
	}
}

func addPkgCleanup(f func()) {
	pkgCleanupsMu.Lock()
	defer pkgCleanupsMu.Unlock()
	pkgCleanups = append(pkgCleanups, f)
}

// startTB is the TB a Target's Start sees. It outlives the test that
// triggered the start: temp dirs and cleanups last for the package run,
// logs go to stderr under -v only (a server may log after that test has
// ended), and Skip/Fatal are recorded and end the start goroutine.
type startTB struct {
	testing.TB
	name string

	mu      sync.Mutex
	msgs    []string
	skipped bool
	failed  bool
}

func (s *startTB) record(msg string, skip, fail bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.msgs = append(s.msgs, msg)
	s.skipped = s.skipped || skip
	s.failed = s.failed || fail
}

func (s *startTB) Name() string                 { return s.name }
func (s *startTB) Helper()                      {}
func (s *startTB) Context() context.Context     { return pkgCtx }
func (s *startTB) Cleanup(f func())             { addPkgCleanup(f) }
func (s *startTB) Log(args ...any)              { s.logf("%s", fmt.Sprint(args...)) }
func (s *startTB) Logf(format string, a ...any) { s.logf(format, a...) }
func (s *startTB) Error(args ...any)            { s.record(fmt.Sprint(args...), false, true) }
func (s *startTB) Errorf(f string, a ...any)    { s.record(fmt.Sprintf(f, a...), false, true) }
func (s *startTB) Fail()                        { s.record("failed", false, true) }
func (s *startTB) FailNow()                     { s.Fail(); runtime.Goexit() }
func (s *startTB) Fatal(args ...any)            { s.Error(args...); runtime.Goexit() }
func (s *startTB) Fatalf(f string, a ...any)    { s.Errorf(f, a...); runtime.Goexit() }
func (s *startTB) SkipNow()                     { s.record("skipped", true, false); runtime.Goexit() }
func (s *startTB) Skip(args ...any)             { s.record(fmt.Sprint(args...), true, false); runtime.Goexit() }
func (s *startTB) Skipf(f string, a ...any) {
	s.record(fmt.Sprintf(f, a...), true, false)
	runtime.Goexit()
}

func (s *startTB) Failed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.failed
}

func (s *startTB) Skipped() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.skipped
}

// logf is quiet: a server's start-up chatter is only useful when something
// breaks, and then the server's own log file says more.
func (s *startTB) logf(format string, a ...any) {
	if testing.Verbose() {
		fmt.Fprintf(os.Stderr, "[%s] %s\n", s.name, fmt.Sprintf(format, a...))
	}
}

func (s *startTB) TempDir() string {
	dir, err := os.MkdirTemp("", "zoo-interop-")
	if err != nil {
		s.Fatalf("TempDir: %v", err)
	}
	addPkgCleanup(func() { os.RemoveAll(dir) })
	return dir
}

// --- per-test environment ---------------------------------------------------

// forEachTarget runs fn as a parallel subtest per registered target.
func forEachTarget(t *testing.T, fn func(t *testing.T, tg Target)) {
	t.Helper()
	if len(targets) == 0 {
		t.Fatal("no targets registered")
	}
	for _, tg := range targets {
		t.Run(tg.Name, func(t *testing.T) {
			t.Parallel()
			fn(t, tg)
		})
	}
}

// env is one test's view of one target: the server address and a unique
// root znode that the test owns.
type env struct {
	t    *testing.T
	tg   Target
	addr string
	root string
}

var unsafePathChars = regexp.MustCompile(`[^A-Za-z0-9_-]+`)

// newEnv gets (or starts) tg's server for o and creates the test's root.
func newEnv(t *testing.T, tg Target, o Options) *env {
	t.Helper()
	addr := serverAddr(t, tg, o)
	var b [4]byte
	_, _ = rand.Read(b[:])
	root := "/t-" + unsafePathChars.ReplaceAllString(t.Name(), "_") + "-" + hex.EncodeToString(b[:])
	e := &env{t: t, tg: tg, addr: addr, root: root}
	c := e.connect()
	defer c.Close() // keep connection counts low; tests open their own
	if _, err := c.Create(root, nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatalf("%s: create test root %s: %v", tg.Name, root, err)
	}
	return e
}

// p joins the test root and a relative path.
func (e *env) p(rel string) string { return e.root + "/" + rel }

// client is a go-zookeeper connection plus a log of every event the server
// sent it (session state changes and watch notifications, in arrival order).
type client struct {
	*zk.Conn
	events *eventLog
	name   string
}

type connectConfig struct {
	timeout time.Duration
	dialer  zk.Dialer
}

type connectOpt func(*connectConfig)

func withSessionTimeout(d time.Duration) connectOpt {
	return func(c *connectConfig) { c.timeout = d }
}

func withDialer(d zk.Dialer) connectOpt {
	return func(c *connectConfig) { c.dialer = d }
}

// connect opens a session and waits until it is established. The
// connection is closed when the test ends.
func (e *env) connect(opts ...connectOpt) *client {
	e.t.Helper()
	cfg := connectConfig{timeout: 15 * time.Second}
	for _, o := range opts {
		o(&cfg)
	}
	log := zktest.NewLogger(e.t, "zk: ")
	ev := newEventLog()
	zopts := optList(zk.WithLogger(log), zk.WithLogInfo(false), zk.WithEventCallback(ev.add))
	if cfg.dialer != nil {
		zopts = append(zopts, zk.WithDialer(cfg.dialer))
	}
	conn, _, err := zk.Connect([]string{e.addr}, cfg.timeout, zopts...)
	if err != nil {
		e.t.Fatalf("%s: connect %s: %v", e.tg.Name, e.addr, err)
	}
	c := &client{Conn: conn, events: ev, name: e.tg.Name}
	// Cleanups run last-registered first: Close before the logger stops
	// (its goroutines may log after Close returns).
	e.t.Cleanup(conn.Close)
	ev.waitState(e.t, e.tg.Name, zk.StateHasSession, 0, 30*time.Second)
	return c
}

// optList makes a slice of go-zookeeper's connection options, whose type
// the package does not export.
func optList[O any](o ...O) []O { return o }

// eventLog records events from go-zookeeper's event callback. The callback
// runs on the client's receive goroutine, so the log's order is the wire
// order, interleaved correctly with replies.
type eventLog struct {
	mu      sync.Mutex
	events  []zk.Event
	changed chan struct{}
}

func newEventLog() *eventLog { return &eventLog{changed: make(chan struct{})} }

func (l *eventLog) add(ev zk.Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, ev)
	close(l.changed)
	l.changed = make(chan struct{})
}

// snapshot returns the events so far and a channel closed on the next one.
func (l *eventLog) snapshot() ([]zk.Event, <-chan struct{}) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]zk.Event(nil), l.events...), l.changed
}

// len is the number of events so far; pass it as `from` to wait for later ones.
func (l *eventLog) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.events)
}

// waitState waits for a session event with the given state at index >= from
// and returns its index.
func (l *eventLog) waitState(t *testing.T, target string, st zk.State, from int, timeout time.Duration) int {
	t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		evs, changed := l.snapshot()
		for i := from; i < len(evs); i++ {
			if evs[i].Type == zk.EventSession && evs[i].State == st {
				return i
			}
		}
		select {
		case <-changed:
		case <-deadline.C:
			t.Fatalf("%s: no session state %v within %v; events: %v", target, st, timeout, evs)
		}
	}
}

// watchEvents returns the watch notifications (non-session events) for path
// received so far.
func (l *eventLog) watchEvents(path string) []zk.EventType {
	evs, _ := l.snapshot()
	var out []zk.EventType
	for _, ev := range evs {
		if ev.Type != zk.EventSession && ev.Path == path {
			out = append(out, ev.Type)
		}
	}
	return out
}

// waitEvent waits for one event on a go-zookeeper watch channel.
func waitEvent(t *testing.T, target string, ch <-chan zk.Event, timeout time.Duration) zk.Event {
	t.Helper()
	select {
	case ev, ok := <-ch:
		if !ok {
			t.Fatalf("%s: watch channel closed without an event", target)
		}
		return ev
	case <-time.After(timeout):
		t.Fatalf("%s: no watch event within %v", target, timeout)
	}
	return zk.Event{}
}

// expectEvent waits for an event and checks its type and path.
func expectEvent(t *testing.T, target string, ch <-chan zk.Event, typ zk.EventType, path string) {
	t.Helper()
	ev := waitEvent(t, target, ch, 20*time.Second)
	if ev.Type != typ || ev.Path != path || ev.Err != nil {
		t.Fatalf("%s: watch event = {%v %q err=%v}, want {%v %q}", target, ev.Type, ev.Path, ev.Err, typ, path)
	}
}

// noEventYet fails if ch already holds an event.
func noEventYet(t *testing.T, target string, ch <-chan zk.Event) {
	t.Helper()
	select {
	case ev := <-ch:
		t.Fatalf("%s: unexpected watch event {%v %q}", target, ev.Type, ev.Path)
	default:
	}
}

// --- error codes ------------------------------------------------------------

// code returns the ZooKeeper error code behind a go-zookeeper error, so that
// tests compare codes (and print them) rather than client-specific values.
// go-zookeeper maps only some codes to sentinels; the rest come back as
// "unknown error: N".
func code(err error) jute.Code {
	if err == nil {
		return 0
	}
	for c, e := range sentinelCodes {
		if errors.Is(err, e) {
			return c
		}
	}
	var n int32
	if _, scanErr := fmt.Sscanf(err.Error(), "unknown error: %d", &n); scanErr == nil {
		return jute.Code(n)
	}
	return clientError
}

// clientError is what code returns for an error that carries no server
// code (go-zookeeper's own errors, such as ErrConnectionClosed).
const clientError jute.Code = 1

var sentinelCodes = map[jute.Code]error{
	jute.BadArguments:            zk.ErrBadArguments,
	jute.APIError:                zk.ErrAPIError,
	jute.NoNode:                  zk.ErrNoNode,
	jute.NoAuth:                  zk.ErrNoAuth,
	jute.BadVersion:              zk.ErrBadVersion,
	jute.NoChildrenForEphemerals: zk.ErrNoChildrenForEphemerals,
	jute.NodeExists:              zk.ErrNodeExists,
	jute.NotEmpty:                zk.ErrNotEmpty,
	jute.SessionExpired:          zk.ErrSessionExpired,
	jute.InvalidACL:              zk.ErrInvalidACL,
	jute.AuthFailed:              zk.ErrAuthFailed,
	jute.Code(-116):              zk.ErrClosing,
	jute.Code(-117):              zk.ErrNothing,
	jute.SessionMoved:            zk.ErrSessionMoved,
	jute.ReconfigDisabled:        zk.ErrReconfigDisabled,
}

// wantCode fails the test if err does not carry the given code.
func wantCode(t *testing.T, target, what string, err error, want jute.Code) {
	t.Helper()
	if got := code(err); got != want {
		t.Errorf("%s: %s: error %v (%v); want %v", target, what, err, got, want)
	}
}

// must fails the test on a non-nil error.
func must(t *testing.T, target, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %s: %v", target, what, err)
	}
}

// --- goroutine leak check ---------------------------------------------------

// checkGoroutines waits up to timeout for every goroutine running client or
// server code to exit, and reports the stacks of those that remain.
func checkGoroutines(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		leaked := leakedGoroutines()
		if len(leaked) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("interop: %d goroutines still running after the tests:\n\n%s",
				len(leaked), strings.Join(leaked, "\n\n"))
		}
		time.Sleep(20 * time.Millisecond) // polling the runtime; nothing to wait on
	}
}

func leakedGoroutines() []string {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var leaked []string
	for i, g := range strings.Split(string(buf), "\n\n") {
		if i == 0 { // this goroutine
			continue
		}
		if strings.Contains(g, "github.com/go-zookeeper/zk.") ||
			strings.Contains(g, "github.com/zoohq/zoo/") {
			leaked = append(leaked, g)
		}
	}
	return leaked
}

// digestOf is the digest scheme's id for user:password:
// user:base64(sha1(user:password)).
func digestOf(user, password string) string {
	sum := sha1.Sum([]byte(user + ":" + password))
	return base64.StdEncoding.EncodeToString(sum[:])
}

// stat returns the stat of an existing node, failing the test otherwise.
func (c *client) stat(t *testing.T, path string) zk.Stat {
	t.Helper()
	ok, st, err := c.Exists(path)
	if err != nil || !ok {
		t.Fatalf("%s: exists %s = %v, %v; want an existing node", c.name, path, ok, err)
	}
	return *st
}

// exists reports whether path exists, failing the test on an error.
func (c *client) exists(t *testing.T, path string) bool {
	t.Helper()
	ok, _, err := c.Exists(path)
	if err != nil {
		t.Fatalf("%s: exists %s: %v", c.name, path, err)
	}
	return ok
}

// create creates a node with the open ACL, failing the test on an error.
func (c *client) create(t *testing.T, path string, data []byte, flags int32) string {
	t.Helper()
	p, err := c.Create(path, data, flags, openACL)
	if err != nil {
		t.Fatalf("%s: create %s (flags %d): %v", c.name, path, flags, err)
	}
	return p
}

// openACL is world:anyone with every permission (Ids.OPEN_ACL_UNSAFE).
var openACL = zk.WorldACL(zk.PermAll)
