package peer

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync/atomic"
	"testing"
	"time"
)

// A link on which nothing arrives is closed after IdleTimeout; until then
// the transport sends heartbeats, and heartbeats it receives are not
// delivered to the Handler.
func TestIdleLinkClosed(t *testing.T) {
	checkLeaks(t)
	a := startNode(t, 1, listen(t), map[uint64]string{2: ""}, func(c *Config) {
		c.HeartbeatInterval = 10 * time.Millisecond
		c.IdleTimeout = 300 * time.Millisecond
	})
	raw, st := dialRaw(t, a.tr.Addr().String(), hello{protoVersion, connLink, 2, 1, 0})
	if st != ackOK {
		t.Fatal(st)
	}
	if _, err := raw.Write(appendFrame(nil, kindHeartbeat, nil)); err != nil {
		t.Fatal(err)
	}
	fr := newFrameReader(raw, 1<<10)
	for i := range 3 {
		kind, p, _, err := fr.next(nil)
		if err != nil || kind != kindHeartbeat || len(p) != 0 {
			t.Fatalf("frame %d: kind %d, %d bytes, %v; want a heartbeat", i, kind, len(p), err)
		}
	}
	raw.waitClosed(t) // we send nothing more: the transport must hang up
	waitFor(t, "link down", func() bool { return !a.tr.Connected(2) })
	if got := a.in.from(2); len(got) != 0 {
		t.Fatalf("heartbeat delivered to Handler: %v", got)
	}
}

// countConn counts bytes read, so a test can wait for time to pass on the
// link without sleeping.
type countConn struct {
	net.Conn
	n *atomic.Int64
}

func (c *countConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// Heartbeats keep an idle link up across many idle timeouts.
func TestHeartbeatsKeepLinkUp(t *testing.T) {
	checkLeaks(t)
	var read atomic.Int64
	var dials atomic.Int32
	nodes := mesh(t, 2, func(c *Config) {
		c.HeartbeatInterval = 5 * time.Millisecond
		c.IdleTimeout = 500 * time.Millisecond
		c.Dial = func(ctx context.Context, addr string) (net.Conn, error) {
			conn, err := (&net.Dialer{}).DialContext(ctx, "tcp", addr)
			if err != nil {
				return nil, err
			}
			dials.Add(1)
			return &countConn{conn, &read}, nil
		}
	})
	waitConnected(t, nodes[0], nodes[1])
	// 250 heartbeats at least 5ms apart span over two idle timeouts.
	waitFor(t, "250 heartbeats", func() bool { return read.Load() >= 1+250*FrameOverhead })
	if d := dials.Load(); d != 1 || !nodes[0].tr.Connected(2) {
		t.Fatalf("idle link dropped: %d dials, connected %v", d, nodes[0].tr.Connected(2))
	}
}

// A peer that stops reading is cut off by the write deadline instead of
// blocking the writer (and the peer's queue) forever.
func TestStuckPeerCut(t *testing.T) {
	checkLeaks(t)
	a := startNode(t, 1, listen(t), map[uint64]string{2: ""}, func(c *Config) {
		c.WriteTimeout = 100 * time.Millisecond
		c.IdleTimeout = time.Hour // only the write deadline may end the link
	})
	raw, st := dialRaw(t, a.tr.Addr().String(), hello{protoVersion, connLink, 2, 1, 0})
	if st != ackOK {
		t.Fatal(st)
	}
	_ = raw // never read: the kernel buffers fill and writes stall
	waitFor(t, "link up", func() bool { return a.tr.Connected(2) })
	big := make([]byte, 4<<20)
	for range 32 {
		a.tr.Send(2, Message{Kind: 1, Data: big})
	}
	waitFor(t, "stuck link cut", func() bool { return !a.tr.Connected(2) })
	waitFor(t, "write timeout logged", func() bool { return a.log.contains("write tcp") && a.log.contains("i/o timeout") })
}

// A second link from the same peer (it restarted) replaces the first.
func TestNewLinkReplacesOld(t *testing.T) {
	checkLeaks(t)
	a := startNode(t, 1, listen(t), map[uint64]string{2: ""}, nil)
	addr := a.tr.Addr().String()
	first, st := dialRaw(t, addr, hello{protoVersion, connLink, 2, 1, 0})
	if st != ackOK {
		t.Fatal(st)
	}
	if _, err := first.Write(appendFrame(nil, 1, []byte("old"))); err != nil {
		t.Fatal(err)
	}
	a.in.waitN(t, 2, 1)
	second, st := dialRaw(t, addr, hello{protoVersion, connLink, 2, 1, 0})
	if st != ackOK {
		t.Fatal(st)
	}
	first.waitClosed(t)
	if _, err := second.Write(appendFrame(nil, 1, []byte("new"))); err != nil {
		t.Fatal(err)
	}
	if got := a.in.waitN(t, 2, 2); string(got[1].Data) != "new" {
		t.Fatalf("got %q", got[1].Data)
	}
	// The transport's messages go to the new link.
	a.tr.Send(2, Message{Kind: 9, Data: []byte("hi")})
	fr := newFrameReader(second, 1<<10)
	for {
		kind, p, _, err := fr.next(nil)
		if err != nil {
			t.Fatal(err)
		}
		if kind == 9 && string(p) == "hi" {
			break
		}
	}
}

func TestBackoff(t *testing.T) {
	b := backoff{min: 10 * time.Millisecond, max: 80 * time.Millisecond}
	wantCur := []time.Duration{10, 20, 40, 80, 80, 80}
	for i, cur := range wantCur {
		cur *= time.Millisecond
		d := b.next()
		if d < cur/2 || d > cur {
			t.Fatalf("step %d: delay %v outside [%v, %v]", i, d, cur/2, cur)
		}
	}
	b.reset()
	if d := b.next(); d > 10*time.Millisecond {
		t.Fatalf("after reset: %v", d)
	}
}

// A peer that stays unreachable is logged on its first failure and then
// once a minute; an unresolvable host or a refusal is a warning.
func TestDialLogRateLimited(t *testing.T) {
	var d dialLog
	t0 := time.Unix(1000, 0)
	down := errors.New("connect: connection refused")
	logged := 0
	for i := range 121 { // a failure a second for two minutes
		if level, ok := d.failed(t0.Add(time.Duration(i)*time.Second), down); ok {
			logged++
			if level != slog.LevelInfo {
				t.Errorf("a down peer logged at %v", level)
			}
		}
	}
	if logged != 3 {
		t.Errorf("logged %d times in two minutes, want 3", logged)
	}
	if d.failingFor() != 2*time.Minute {
		t.Errorf("failing for %v", d.failingFor())
	}
	var u dialLog
	dns := fmt.Errorf("peer: dial 2 at nohost:2888: %w", &net.DNSError{Err: "no such host", Name: "nohost", IsNotFound: true})
	if level, ok := u.failed(t0, dns); !ok || level != slog.LevelWarn {
		t.Errorf("unresolvable host: %v %v", level, ok)
	}
}
