// Package inproc starts Zoo servers inside a test's process, on a free
// loopback port, and stops them when the test ends. It is a package of
// its own, not part of zktest, because internal/server's tests import
// zktest and this package imports internal/server.
package inproc

import (
	"context"
	"log/slog"
	"net"
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
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
		<-served
	})
	return ln.Addr().String()
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
