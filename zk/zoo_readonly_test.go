package zk

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"testing"
	"time"

	zooserver "github.com/zoohq/zoo/internal/server"
)

// startZooReadOnly runs one member of a three-server ensemble whose other
// members never start, with read-only mode and local sessions enabled, as
// startApacheReadOnly does with Apache: it serves read-only clients once
// it has had no leader for 2s (readOnlyDelay).
func startZooReadOnly(t testing.TB) (string, func()) {
	quorum, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("zoo: listen: %v", err)
	}
	peers := map[uint64]string{}
	membership := fmt.Sprintf("server.1=%s:1:participant\n", quorum.Addr())
	for id := uint64(2); id <= 3; id++ {
		// A port that was free and is closed again: the member dials a
		// server that is not there.
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatalf("zoo: listen: %v", err)
		}
		peers[id] = ln.Addr().String()
		ln.Close()
		membership += fmt.Sprintf("server.%d=%s:%d:participant\n", id, peers[id], id)
	}
	srv, err := zooserver.New(zooserver.Config{
		Logger:          slog.New(slog.DiscardHandler),
		ServerID:        1,
		TickTime:        200 * time.Millisecond,
		FourLetterWords: []string{"*"},
		Version:         "3.9.2-zoo",
		ReadOnlyMode:    true,
		LocalSessions:   true,
		Ensemble: zooserver.Ensemble{
			Voters: []uint64{1, 2, 3}, Peers: peers, Listener: quorum, Membership: membership + "version=0",
		},
	})
	if err != nil {
		quorum.Close()
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
