package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/zoohq/zoo/internal/zktest"
)

// The tests in this package drive a real server over loopback with a raw
// protocol client (rawclient_test.go), so that they control every byte: the
// go-zookeeper suite in interop/ covers what an ordinary client does, these
// tests cover the server's edges (framing, limits, ordering, shutdown).
//
// Set ZOO_APACHE_ADDR=host:port (a standalone Apache ZooKeeper 3.8 with
// 4lw.commands.whitelist=* and the default jute.maxbuffer, as
// interop/scripts/start-apache.sh starts it) to run the tests that need no
// special configuration against Apache too: Apache is the oracle, and every
// such test must pass against it unchanged.

func TestMain(m *testing.M) {
	base := runtime.NumGoroutine()
	code := m.Run()
	stopFuzzServer()
	if err := checkGoroutines(base, 10*time.Second); err != nil {
		fmt.Fprintln(os.Stderr, err)
		code = 1
	}
	os.Exit(code)
}

// checkGoroutines waits until no more goroutines run than at start: every
// server was shut down, and Shutdown must have ended everything it started.
// Goroutines that run no code of this module (the fuzzing engine's signal
// handler, say) are the testing framework's, not leaks.
func checkGoroutines(base int, within time.Duration) error {
	deadline := time.Now().Add(within)
	for {
		leaked := ourGoroutines()
		if runtime.NumGoroutine() <= base || len(leaked) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("goroutine leak: %d running, %d at start; ours:\n\n%s",
				runtime.NumGoroutine(), base, strings.Join(leaked, "\n\n"))
		}
		time.Sleep(10 * time.Millisecond) // polling with a deadline
	}
}

// ourGoroutines returns the stacks of the goroutines, other than the
// caller's, that run or were started by code of this module.
func ourGoroutines() []string {
	var out []string
	for i, g := range zktest.Goroutines() {
		if i > 0 && strings.Contains(g, "github.com/zoohq/zoo/") {
			out = append(out, g)
		}
	}
	return out
}

// waitFor polls cond until it returns nil or the deadline passes.
func waitFor(t testing.TB, within time.Duration, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("condition not met within %v: %v", within, err)
		}
		time.Sleep(5 * time.Millisecond) // polling with a deadline
	}
}

// testServer is an in-process server on a loopback port.
type testServer struct {
	srv    *Server
	addr   string
	served chan error
}

// baseConfig is the configuration every test server starts from.
func baseConfig() Config {
	return Config{
		FourLetterWords: []string{"*"},
		Version:         "3.9.2-zoo",
	}
}

// startServer starts a server configured by baseConfig and then edit (if
// not nil), and shuts it down when the test ends, checking that Shutdown
// returns promptly and Serve returns ErrServerClosed.
func startServer(t testing.TB, edit func(*Config)) *testServer {
	t.Helper()
	cfg := baseConfig()
	cfg.Logger = testLogger(t)
	if edit != nil {
		edit(&cfg)
	}
	ts := newTestServer(t, cfg)
	t.Cleanup(func() {
		if err := ts.shutdown(10 * time.Second); err != nil {
			t.Error(err)
		}
	})
	return ts
}

func newTestServer(t testing.TB, cfg Config) *testServer {
	t.Helper()
	srv, err := New(cfg)
	if err != nil {
		t.Fatalf("new server: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		_ = srv.Shutdown(context.Background())
		t.Fatalf("listen: %v", err)
	}
	ts := &testServer{srv: srv, addr: ln.Addr().String(), served: make(chan error, 1)}
	go func() { ts.served <- srv.Serve(ln) }()
	ts.waitReady(t)
	return ts
}

// waitReady waits until the server serves: its one-voter raft group has
// elected it and applied its first entry. Until then it accepts
// connections but answers srvr with "not currently serving", as Apache
// does while it starts.
func (ts *testServer) waitReady(t testing.TB) {
	t.Helper()
	waitFor(t, ioTimeout, func() error {
		if !ts.srv.rep.IsLeader() {
			return errors.New("server not serving yet")
		}
		return nil
	})
}

// shutdown stops the server and checks how Serve ended.
func (ts *testServer) shutdown(within time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	if err := ts.srv.Shutdown(ctx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	select {
	case err := <-ts.served:
		if !errors.Is(err, ErrServerClosed) {
			return fmt.Errorf("Serve returned %v, want ErrServerClosed", err)
		}
		ts.served <- err // keep it for a second look
	case <-ctx.Done():
		return errors.New("Serve did not return after Shutdown")
	}
	return nil
}

// target is a server a test runs against: always Zoo, and Apache as well
// when ZOO_APACHE_ADDR is set.
type target struct {
	name string
	addr string
	zoo  *testServer // nil for Apache
}

// targets starts a Zoo server with the default test configuration and
// returns it, plus Apache if configured. Use it only for behaviour that
// needs no special server settings.
func targets(t *testing.T) []target {
	ts := []target{{name: "zoo"}}
	z := startServer(t, nil)
	ts[0].addr, ts[0].zoo = z.addr, z
	if a := os.Getenv("ZOO_APACHE_ADDR"); a != "" {
		ts = append(ts, target{name: "apache", addr: a})
	}
	return ts
}

// testLogger sends the server's log to t.Log, which shows it for failed
// tests only.
func testLogger(t testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(tWriter{t}, &slog.HandlerOptions{Level: slog.LevelInfo}))
}

type tWriter struct{ t testing.TB }

func (w tWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}
