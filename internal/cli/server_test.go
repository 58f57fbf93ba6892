package cli

import (
	"bytes"
	"context"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	zooserver "github.com/zoohq/zoo/internal/server"
)

// startZoo runs an in-process Zoo server on a free port for the test.
func startZoo(t testing.TB) string {
	t.Helper()
	srv, err := zooserver.New(zooserver.Config{
		Logger:          slog.New(slog.DiscardHandler),
		TickTime:        500 * time.Millisecond,
		ExtendedTypes:   true,
		ContainerCheck:  100 * time.Millisecond,
		FourLetterWords: []string{"*"},
	})
	if err != nil {
		t.Fatalf("new server: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
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

// run runs Main with args and script as stdin and returns what it wrote.
func run(t testing.TB, script string, args ...string) (stdout, stderr string, status int) {
	t.Helper()
	var out, errw bytes.Buffer
	status = Main(args, strings.NewReader(script), &out, &errw)
	return out.String(), errw.String(), status
}
