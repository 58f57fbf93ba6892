package recipe

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zoohq/zoo/zk"
)

// The recipes are client-side code: every test runs against each target
// server, Apache ZooKeeper 3.8 (the oracle) and Zoo, to show that they rely
// on ZooKeeper's documented behaviour only. A target starts a standalone
// server and returns its client address and a function that stops it. Every
// target runs with tickTime 500 ms (sessions of 1 s to 10 s), extended
// types on and container reaping every 100 ms.
type target struct {
	name  string
	start func(testing.TB) (addr string, stop func())
}

// targets is filled by the init functions of apache_test.go and zoo_test.go.
var targets []target

// server is a target's server, started by the first test that needs it
// and shared by the package's tests (each works under its own root znode).
type server struct {
	once sync.Once
	addr string
	stop func()
	skip string // non-empty: tests needing the server skip with this
}

// atExit runs after the tests (removing files shared by tests).
var atExit []func()

var (
	serversMu sync.Mutex
	servers   = map[string]*server{}
	// addrs maps the name of a per-target subtest to its server's address;
	// newClient finds it from any test below that subtest.
	addrs = map[string]string{}
)

func TestMain(m *testing.M) {
	installHooks()
	code := m.Run()
	serversMu.Lock()
	for _, s := range servers {
		if s.stop != nil {
			s.stop()
		}
	}
	serversMu.Unlock()
	for _, f := range atExit {
		f()
	}
	os.Exit(code)
}

// forEachTarget runs fn as a parallel subtest per target.
func forEachTarget(t *testing.T, fn func(t *testing.T)) {
	t.Helper()
	t.Parallel()
	for _, tg := range targets {
		t.Run(tg.name, func(t *testing.T) {
			t.Parallel()
			addr := sharedServer(t, tg)
			serversMu.Lock()
			addrs[t.Name()] = addr
			serversMu.Unlock()
			t.Cleanup(func() {
				serversMu.Lock()
				delete(addrs, t.Name())
				serversMu.Unlock()
			})
			fn(t)
		})
	}
}

// serverAddr is the address of the server of the target t runs against.
func serverAddr(t *testing.T) string {
	t.Helper()
	serversMu.Lock()
	defer serversMu.Unlock()
	for name := t.Name(); ; {
		if addr, ok := addrs[name]; ok {
			return addr
		}
		i := strings.LastIndexByte(name, '/')
		if i < 0 {
			t.Fatalf("%s does not run under forEachTarget", t.Name())
		}
		name = name[:i]
	}
}

// sharedServer starts tg's server once per package run and returns its
// address; the test skips if it could not start.
func sharedServer(t *testing.T, tg target) string {
	t.Helper()
	serversMu.Lock()
	s := servers[tg.name]
	if s == nil {
		s = &server{}
		servers[tg.name] = s
	}
	serversMu.Unlock()
	s.once.Do(func() {
		tb := &startTB{TB: t}
		done := make(chan struct{})
		go func() { // Skip and Fatal end this goroutine only
			defer close(done)
			s.addr, s.stop = tg.start(tb)
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
		t.Skipf("%s: %s", tg.name, s.skip)
	}
	return s.addr
}

// startTB lets a target's start outlive the test that triggered it: a
// skip or failure is recorded for every test that needs the server.
type startTB struct {
	testing.TB
	mu   sync.Mutex
	msgs []string
}

func (s *startTB) note(msg string)           { s.mu.Lock(); s.msgs = append(s.msgs, msg); s.mu.Unlock() }
func (s *startTB) Helper()                   {}
func (s *startTB) Logf(string, ...any)       {}
func (s *startTB) Errorf(f string, a ...any) { fmt.Fprintf(os.Stderr, f+"\n", a...) }
func (s *startTB) Skip(a ...any)             { s.note(fmt.Sprint(a...)); runtime.Goexit() }
func (s *startTB) Skipf(f string, a ...any)  { s.note(fmt.Sprintf(f, a...)); runtime.Goexit() }
func (s *startTB) Fatal(a ...any)            { s.note("failed: " + fmt.Sprint(a...)); runtime.Goexit() }
func (s *startTB) Fatalf(f string, a ...any) {
	s.note("failed: " + fmt.Sprintf(f, a...))
	runtime.Goexit()
}

// hooks are the test hooks of one test, chosen by the path prefix (the
// test's root), so that parallel tests do not see each other's events.
type hooks struct {
	created func(path string) error
	waiting func(self, blocker string)
	woken   func(self string)
}

var (
	hooksMu sync.Mutex
	byRoot  = map[string]hooks{}
)

func hooksFor(p string) hooks {
	hooksMu.Lock()
	defer hooksMu.Unlock()
	for root, h := range byRoot {
		if strings.HasPrefix(p, root+"/") {
			return h
		}
	}
	return hooks{}
}

func installHooks() {
	testHookCreated = func(p string) error {
		if h := hooksFor(p); h.created != nil {
			return h.created(p)
		}
		return nil
	}
	testHookWaiting = func(self, blocker string) {
		if h := hooksFor(self); h.waiting != nil {
			h.waiting(self, blocker)
		}
	}
	testHookWoken = func(self string) {
		if h := hooksFor(self); h.woken != nil {
			h.woken(self)
		}
	}
}

func setHooks(t *testing.T, root string, h hooks) {
	hooksMu.Lock()
	byRoot[root] = h
	hooksMu.Unlock()
	t.Cleanup(func() {
		hooksMu.Lock()
		delete(byRoot, root)
		hooksMu.Unlock()
	})
}

// testRoot is a root znode of the test's own. Call it once per test.
func testRoot(t *testing.T) string {
	// Unique per run too, so that -count=N starts from a clean tree.
	return "/" + strings.NewReplacer("/", "_", " ", "_").Replace(t.Name()) + "-" + newGUID()[:6]
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// newClient opens a session of its own, closed at the end of the test.
func newClient(t *testing.T) *zk.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := zk.Connect(ctx, serverAddr(t), zk.WithSessionTimeout(4*time.Second))
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// waitCh fails the test if ch is not closed or does not deliver before ctx ends.
func waitCh[T any](t *testing.T, ctx context.Context, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-ctx.Done():
		var zero T
		t.Fatalf("timed out waiting for %s", what)
		return zero
	}
}

// errLostReply is what the created hook returns to simulate a lost reply.
var errLostReply = &zk.Error{Op: "create", Err: zk.ErrConnectionLoss}

var zkErrNodeExists = zk.ErrNodeExists
