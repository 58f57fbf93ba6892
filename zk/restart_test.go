package zk

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"sync/atomic"
	"testing"
	"time"

	zooserver "github.com/zoohq/zoo/internal/server"
)

// durableZoo is a Zoo server on a data directory that can be stopped and
// started again on the same address: a restart with the durable log.
type durableZoo struct {
	t      *testing.T
	dir    string
	addr   string
	srv    *zooserver.Server
	served chan error
}

func (z *durableZoo) start() {
	z.t.Helper()
	srv, err := zooserver.New(zooserver.Config{
		Logger:   slog.New(slog.DiscardHandler),
		TickTime: 500 * time.Millisecond,
		DataDir:  z.dir,
		Version:  "3.9.2-zoo",
	})
	if err != nil {
		z.t.Fatalf("zoo: %v", err)
	}
	addr := z.addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	var ln net.Listener
	deadline := time.Now().Add(10 * time.Second)
	for ln, err = net.Listen("tcp", addr); err != nil; ln, err = net.Listen("tcp", addr) {
		if time.Now().After(deadline) { // the old socket's port not yet free
			z.t.Fatalf("zoo: listen %s: %v", addr, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	z.addr, z.srv, z.served = ln.Addr().String(), srv, make(chan error, 1)
	go func() { z.served <- srv.Serve(ln) }()
}

func (z *durableZoo) stop() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := z.srv.Shutdown(ctx); err != nil {
		z.t.Errorf("zoo: shutdown: %v", err)
	}
	<-z.served
}

// A session survives a restart of its server with the durable log: the
// client reattaches with its id, password and last zxid, its ephemeral is
// still there, its watch is re-registered and the event it missed while
// the server was down arrives.
// Ref: paper section 4.4; programmer's guide, "ZooKeeper Sessions".
func TestSessionSurvivesServerRestart(t *testing.T) {
	z := &durableZoo{t: t, dir: t.TempDir()}
	z.start()
	defer func() { z.stop() }()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	// The client may dial only while away is false, so the change below
	// happens while it is gone, and its event is one it missed.
	var away atomic.Bool
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		if away.Load() {
			return nil, errors.New("test: the client is kept away")
		}
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}
	c, err := Connect(ctx, z.addr, WithSessionTimeout(10*time.Second), WithDialer(dial))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	sid := c.SessionID()
	if _, _, err := c.Create(ctx, "/eph", []byte("mine"), Ephemeral, OpenACLUnsafe()); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Create(ctx, "/watched", []byte("v1"), Persistent, OpenACLUnsafe()); err != nil {
		t.Fatal(err)
	}
	_, _, events, err := c.GetW(ctx, "/watched")
	if err != nil {
		t.Fatal(err)
	}

	// The server restarts; before the client is back, another client
	// changes the watched node.
	away.Store(true)
	z.stop()
	z.start()
	other, err := Connect(ctx, z.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if _, err := other.Set(ctx, "/watched", []byte("v2"), -1); err != nil {
		t.Fatal(err)
	}
	away.Store(false)

	select {
	case ev := <-events:
		if ev.Type != EventNodeDataChanged || ev.Path != "/watched" {
			t.Fatalf("event %+v; want NodeDataChanged on /watched", ev)
		}
	case <-ctx.Done():
		t.Fatal("the watch did not fire after the restart")
	}
	if c.SessionID() != sid {
		t.Fatalf("session %#x after the restart; want %#x", c.SessionID(), sid)
	}
	data, st, err := c.Get(ctx, "/eph")
	if err != nil || string(data) != "mine" || st.EphemeralOwner != sid {
		t.Fatalf("ephemeral after the restart: %q %+v %v", data, st, err)
	}
	if _, _, err := other.Create(ctx, "/eph", nil, Persistent, OpenACLUnsafe()); !errors.Is(err, ErrNodeExists) {
		t.Fatalf("create over the ephemeral: %v; want it still there (NodeExists)", err)
	}
}
