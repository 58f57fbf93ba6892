package main

import (
	"fmt"
	"log/slog"
	"testing"

	"github.com/zoohq/zoo/internal/server"
	"github.com/zoohq/zoo/internal/zktest/inproc"
)

// serveOn serves srv on addr; see inproc.Serve.
func serveOn(t testing.TB, srv *server.Server, addr string) (string, func()) {
	t.Helper()
	return inproc.Serve(t, srv, addr)
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
