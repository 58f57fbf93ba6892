package server

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/zoohq/zoo/internal/jute"
)

// maxClientCnxns caps the connections of one client address: one more is
// closed at once, and a slot freed by a close can be taken again.
// Ref: administrator's guide, "maxClientCnxns".
func TestMaxClientCnxns(t *testing.T) {
	ts := startServer(t, func(c *Config) { c.MaxClientCnxns = 2 })
	first := newSession(t, ts.addr)
	second := newSession(t, ts.addr)

	for range 3 {
		over := dialRaw(t, ts.addr)
		over.writeFrame(ptr(connectReq(30000)))
		over.expectClosedSilently()
	}
	// Four-letter words count too.
	over := dialRaw(t, ts.addr)
	over.writeRaw([]byte("ruok"))
	over.expectClosedSilently()

	// The two admitted sessions are fine.
	first.getData("/")
	second.getData("/")

	// Free a slot; the server notices the close on its own time.
	first.close()
	waitFor(t, ioTimeout, func() error {
		c := dialRaw(t, ts.addr)
		defer c.close()
		resp, _, err := c.tryHandshake(connectReq(30000))
		if err != nil {
			return fmt.Errorf("third connection still refused: %w", err)
		}
		if resp.SessionID == 0 {
			return errors.New("handshake refused")
		}
		return nil
	})
	second.getData("/")
}

// maxCnxns bounds all connections, whatever their address.
func TestMaxCnxns(t *testing.T) {
	ts := startServer(t, func(c *Config) { c.MaxCnxns = 1 })
	only := newSession(t, ts.addr)
	over := dialRaw(t, ts.addr)
	over.writeFrame(ptr(connectReq(30000)))
	over.expectClosedSilently()
	only.getData("/")
}

// A client that pipelines requests and does not read the replies must not
// make the server buffer without bound: once its replies pile up past the
// pause mark the server stops reading its requests (backpressure, as
// Apache), so its writes block instead of the server's memory growing.
// Other clients do not notice, and once it reads it gets every reply, in
// order: no request is lost, none holds a throttling token meanwhile.
//
// Reads sent behind a write wait for it and are answered together once it
// is; their replies, large ones too, must neither pile up without bound
// nor get the connection closed as a slow consumer's (a client that reads
// as fast as it can was closed so, and so once in CI was one whose reads
// came right behind its handshake's session txn).
// Ref: DESIGN decision 10; STYLE pattern 18 (slow consumer); issue 13,
// defect 5.
func TestSlowConsumer(t *testing.T) {
	t.Run("reads", func(t *testing.T) { testSlowConsumer(t, false) })
	t.Run("reads behind a write", func(t *testing.T) { testSlowConsumer(t, true) })
}

func testSlowConsumer(t *testing.T, behindWrite bool) {
	const maxOutbound = 64 << 10
	ts := startServer(t, func(c *Config) { c.MaxOutbound = maxOutbound })
	other := newSession(t, ts.addr)
	root := testRoot(t, other)
	big := bytes.Repeat([]byte("b"), 100<<10)
	other.create(root+"/big", big, 0)

	slow := dialSmallBuffer(t, ts.addr)
	slow.handshake(connectReq(30000))
	var out []byte
	if behindWrite {
		out = slow.requestFrame(jute.OpSetData, &jute.SetDataRequest{Path: root, Data: []byte("x"), Version: -1})
	}
	const n = 300 // 30 MB of replies: far more than any socket buffer
	for range n {
		out = append(out, slow.requestFrame(jute.OpGetData, &jute.PathWatch{Path: root + "/big"})...)
	}
	wrote := make(chan error, 1)
	go func() { _, err := slow.nc.Write(out); wrote <- err }() // blocks while the server does not read

	// Meanwhile another client is served normally, large replies included,
	// and the server holds little for the one that does not read.
	for range 10 {
		if got := other.getData(root + "/big"); !bytes.Equal(got, big) {
			t.Fatal("other client got wrong data")
		}
		if ob := ts.srv.OutboundBytes(); ob > int64(2*maxOutbound+len(big)) {
			t.Fatalf("%d bytes held for a client that does not read", ob)
		}
	}

	// Now read: every reply arrives, in order.
	total := n
	if behindWrite {
		total++
	}
	for i := range total {
		if r := slow.readReply(); r.hdr.Xid != int32(i+1) || r.hdr.Err != jute.OK {
			t.Fatalf("reply %d: %v", i, r)
		}
	}
	if err := <-wrote; err != nil {
		t.Fatalf("write: %v", err)
	}
	slow.getData("/")
	other.getData(root)
	waitFor(t, ioTimeout, func() error {
		if n := len(ts.srv.tokens); n != 0 {
			return fmt.Errorf("%d requests still hold a throttling token", n)
		}
		return nil
	})
}

// A frame that announces a large length and then trickles (or never
// sends) its bytes costs the server a bounded buffer, not the announced
// size, and blocks only its own connection.
func TestPartialFrameBlocksOnlyItsConnection(t *testing.T) {
	ts := startServer(t, nil)
	var stuck []*rawClient
	for range 20 {
		c := newSession(t, ts.addr)
		c.writeRaw(frameHeader(jute.DefaultMaxBuffer)) // a full-size frame, never sent
		stuck = append(stuck, c)
	}
	c := newSession(t, ts.addr)
	c.getData("/")
	for _, s := range stuck {
		s.close()
	}
	c.getData("/")
}

// A client that stops reading while its watches keep firing is a slow
// consumer too: once its queued events pass MaxOutbound it is
// disconnected, and the writes that fire the events are not held up.
func TestSlowConsumerOfEvents(t *testing.T) {
	ts := startServer(t, func(c *Config) { c.MaxOutbound = 64 << 10 })
	writer := newSession(t, ts.addr)
	root := testRoot(t, writer)

	slow := dialSmallBuffer(t, ts.addr)
	slow.handshake(connectReq(30000))
	slow.mustCall(jute.OpAddWatch, &jute.AddWatchRequest{Path: root, Mode: jute.AddWatchPersistentRecursive}, nil, jute.OK)
	// From here on slow reads nothing.

	// Long names make every event about 1 KiB: thousands of them overflow
	// any socket buffer and then the queue.
	long := string(bytes.Repeat([]byte("n"), 1000))
	var steps []step
	for i := range 3000 {
		p := fmt.Sprintf("%s/%s%05d", root, long, i)
		steps = append(steps, step{jute.OpCreate, createReq(p, nil, 0), jute.OK, nil})
	}
	for chunk := range slices.Chunk(steps, 20) {
		runPipelined(t, writer, chunk)
	}
	if got := slow.expectClosed(); len(got) >= len(steps) {
		t.Fatalf("slow watcher got all %d events; want a disconnect", len(got))
	}
	checkServing(t, ts.addr)
}

// Ref: issue 13, defect 4; Apache's NIOServerCnxnFactory closes a
// connection that has no session after zookeeper.nio.sessionlessCnxnTimeout
// (10 s). Sockets that connect and never finish their handshake (nothing
// sent, half a ConnectRequest, half a four-letter word) must not hold
// maxClientCnxns' slots of their address for ever: the server closes them
// after HandshakeTimeout and the address's other clients get in.
func TestIdleHandshakesAreClosed(t *testing.T) {
	ts := startServer(t, func(c *Config) {
		c.MaxClientCnxns = 60
		c.HandshakeTimeout = 300 * time.Millisecond
	})
	half := jute.AppendFrame(nil, ptr(connectReq(30000)))
	var idle []*rawClient
	for i := range 60 {
		c := dialRaw(t, ts.addr)
		switch i % 3 {
		case 1:
			c.writeRaw(half[:len(half)/2])
		case 2:
			c.writeRaw([]byte("ru"))
		}
		idle = append(idle, c)
	}
	for _, c := range idle {
		c.expectClosedSilently()
	}
	c := dialRaw(t, ts.addr)
	c.handshake(connectReq(30000))
	c.getData("/")
	// An established session is not subject to the handshake's deadline.
	time.Sleep(2 * 300 * time.Millisecond) // idle past the handshake timeout, on purpose
	c.getData("/")
}
