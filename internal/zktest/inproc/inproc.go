// Package inproc starts Zoo servers inside a test's process, on a free
// loopback port, and stops them when the test ends. It is a package of
// its own, not part of zktest, because internal/server's tests import
// zktest and this package imports internal/server.
package inproc

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/zoohq/zoo/internal/server"
)

// Start serves cfg on 127.0.0.1:0 and returns the client address. A nil
// cfg.Logger discards the server's log. The server is shut down (within
// 10 s, else the test fails) when the test and its subtests end.
func Start(t testing.TB, cfg server.Config) string {
	t.Helper()
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	srv, err := server.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	addr, _ := Serve(t, srv, "127.0.0.1:0")
	return addr
}

// Serve serves srv on addr ("127.0.0.1:0" for a free port) and returns
// the address and a stop that shuts srv down (within 10 s, else the test
// fails) and waits for Serve. The test's end calls stop too; calling it
// more than once is safe.
func Serve(t testing.TB, srv *server.Server, addr string) (string, func()) {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := srv.Shutdown(ctx); err != nil {
				t.Errorf("shutdown: %v", err)
			}
			if err := <-served; !errors.Is(err, server.ErrServerClosed) {
				t.Errorf("serve: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	return ln.Addr().String(), stop
}

// Standalone starts an in-memory standalone server with every
// four-letter word allowed and a short tick (sessions of 1–10 s), as
// workload tests want.
func Standalone(t testing.TB) string {
	t.Helper()
	return Start(t, server.Config{
		TickTime:        500 * time.Millisecond,
		FourLetterWords: []string{"*"},
		Version:         "3.9.2-zoo",
	})
}
