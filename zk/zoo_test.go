package zk

import (
	"context"
	"log/slog"
	"net"
	"testing"
	"time"

	zooserver "github.com/zoohq/zoo/internal/server"
)

// The Zoo target: an in-process server with the settings the tests need.
// Its read-only server is startZooReadOnly.
func init() {
	targets = append(targets, target{name: "zoo", start: startZoo, startReadOnly: startZooReadOnly})
}

func startZoo(t testing.TB) (string, func()) {
	return serveZoo(t, zooserver.Config{
		Logger:          slog.New(slog.DiscardHandler),
		TickTime:        500 * time.Millisecond,
		ExtendedTypes:   true,
		ContainerCheck:  100 * time.Millisecond,
		FourLetterWords: []string{"*"},
		Version:         "3.9.2-zoo",
	})
}

// serveZoo starts an in-process server with cfg on a free loopback port
// and returns its address and the function that stops it.
func serveZoo(t testing.TB, cfg zooserver.Config) (string, func()) {
	srv, err := zooserver.New(cfg)
	if err != nil {
		t.Fatalf("zoo: new server: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("zoo: listen: %v", err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	return ln.Addr().String(), func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			t.Errorf("zoo: shutdown: %v", err)
		}
		<-served
	}
}
