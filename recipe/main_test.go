package recipe

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	zooserver "github.com/zoohq/zoo/internal/server"
	"github.com/zoohq/zoo/zk"
)

// One in-process Zoo server for the package's tests; every test works
// under its own root znode.
var serverAddr string

func TestMain(m *testing.M) {
	srv, err := zooserver.New(zooserver.Config{
		Logger:         slog.New(slog.DiscardHandler),
		TickTime:       500 * time.Millisecond,
		ExtendedTypes:  true,
		ContainerCheck: 100 * time.Millisecond,
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "new server:", err)
		os.Exit(1)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, "listen:", err)
		os.Exit(1)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	serverAddr = ln.Addr().String()
	installHooks()

	code := m.Run()

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	if err := srv.Shutdown(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "shutdown:", err)
	}
	cancel()
	<-served
	os.Exit(code)
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
	c, err := zk.Connect(ctx, serverAddr, zk.WithSessionTimeout(4*time.Second))
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
