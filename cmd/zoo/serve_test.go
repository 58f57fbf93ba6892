package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/zoohq/zoo/internal/server"
)

// serveOn serves srv on addr ("127.0.0.1:0" for a free port) and returns
// the address and a stop that shuts the server down and waits for Serve.
// The test's end calls stop too; calling it more than once is safe.
func serveOn(t testing.TB, srv *server.Server, addr string) (string, func()) {
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
			<-served
		})
	}
	t.Cleanup(stop)
	return ln.Addr().String(), stop
}

// adminTestServer starts a server from zoo.cfg lines, after clientPort and
// an AdminServer on 127.0.0.1 at a free port, and that AdminServer; the
// test's end stops both. It returns the server and the admin port.
func adminTestServer(t *testing.T, lines string) (*server.Server, int) {
	t.Helper()
	adminPort := freePort(t)
	cfg, srv := loadServer(t, fmt.Sprintf("clientPort=%d\nadmin.serverAddress=127.0.0.1\nadmin.serverPort=%d\n%s",
		freePort(t), adminPort, lines))
	stop, err := startAdmin(slog.New(slog.DiscardHandler), cfg, srv)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return srv, adminPort
}
